// A whole mesh on a broker of its own, for suites that stop and restart the
// broker under running hosts (never the run's shared one). Like freshMesh
// (test/harness/mesh.ts): a fresh database cloned from the template, a
// control-plane home whose broker.json names the private broker, real
// `mesh serve` and `mesh-host` processes; all stopped at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshStore, type Store } from '../harness/store.js';
import { startRabbit, type Rabbit } from '../harness/rabbitmq.js';
import { VHOST } from '../../bundle/rabbitmq.js'; // the vhost the broker is made with, as on a first node
import { spawnProc, runCli, MESH, MESH_HOST, type Proc, type Host, type CliResult } from '../harness/mesh.js';
import { root } from '../declare/helpers.js';
import { writeBroker, ensureSigner, type BrokerConfig } from '../../src/home/home.js';

export interface PrivateMesh {
  rabbit: Rabbit;
  store: Store;
  home: string;
  env: NodeJS.ProcessEnv;
  cli(args: string[]): Promise<CliResult>;
  serve(): Promise<Proc>;
  host(name: string, env?: NodeJS.ProcessEnv): Host;
  joined(name: string, env?: NodeJS.ProcessEnv): Promise<{ host: Host; proc: Proc }>;
  stop(): Promise<void>;
}

export async function privateMesh(): Promise<PrivateMesh> {
  const base = mkdtempSync(join(tmpdir(), 'mesh-private-'));
  const dirs = [base];
  const procs: Proc[] = [];
  let rabbit: Rabbit | undefined;
  let store: Store | undefined;
  const cleanup = async () => {
    await Promise.allSettled(procs.map((p) => p.stop()));
    await Promise.allSettled([rabbit?.stop(), store?.drop()]);
    if (!process.env.MESH_TEST_KEEP) for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  try {
    [rabbit, store] = await Promise.all([
      startRabbit(join(base, 'rabbit'), { listenAddress: '127.0.0.1' }),
      freshStore(),
    ]);
    const home = join(base, 'home');
    const broker: BrokerConfig = {
      amqp: { host: '127.0.0.1', port: rabbit.amqpPort },
      vhost: VHOST,
      user: rabbit.admin.user,
      password: rabbit.admin.password,
      management: `http://127.0.0.1:${rabbit.mgmtPort}`,
      public: `127.0.0.1:${rabbit.amqpsPort}`,
      fingerprint: rabbit.fingerprint,
    };
    // Metrics on a free loopback port: suites run side by side, and each serve needs its own.
    const env: NodeJS.ProcessEnv = { ...process.env, ...store.env, MESH_HOME: home, MESH_SERVE_METRICS: '127.0.0.1:0' };
    await writeBroker(broker, env);
    await ensureSigner(env);
    const cli = (args: string[]) => runCli(MESH, args, env);
    const host = (name: string, extra: NodeJS.ProcessEnv = {}): Host => {
      const dir = mkdtempSync(join(tmpdir(), `mesh-host-${name}-`));
      dirs.push(dir);
      const henv = { ...process.env, MESH_HOST_DIR: dir, ...extra };
      return {
        name,
        dir,
        env: henv,
        enrol: (t, more = []) => runCli(MESH_HOST, ['enrol', ...more], henv, t),
        run: () => {
          const p = spawnProc(process.execPath, [MESH_HOST, 'run'], henv);
          procs.push(p);
          return p;
        },
      };
    };
    return {
      rabbit,
      store,
      home,
      env,
      cli,
      host,
      async serve() {
        const p = spawnProc(process.execPath, [MESH, 'serve'], env);
        procs.push(p);
        await p.waitFor(/consuming mesh\.control/, 30_000);
        return p;
      },
      async joined(name, extra = {}) {
        const t = await cli(['token', 'issue', name, '--json']);
        if (t.code !== 0) throw new Error(`token issue failed: ${t.stderr}`);
        const h = host(name, extra);
        const r = await h.enrol((JSON.parse(t.stdout) as { token: string }).token);
        if (r.code !== 0) throw new Error(`enrol ${name} failed: ${r.stderr}`);
        const proc = h.run();
        await proc.waitFor(/connected to /);
        return { host: h, proc };
      },
      stop: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** A host's settings for riding out a broker outage: it writes under ROOT (when given), retries from half a second up to MAX seconds, and reconciles only when a declaration comes. */
export const outageEnv = (root?: string, max = 2): NodeJS.ProcessEnv => ({
  ...(root === undefined ? {} : { MESH_HOST_ROOTS: root }),
  MESH_HOST_RECONCILE_SECONDS: '3600',
  MESH_HOST_BACKOFF_MIN_SECONDS: '0.5',
  MESH_HOST_BACKOFF_MAX_SECONDS: String(max),
  MESH_HOST_BACKOFF_RESET_SECONDS: '30',
});

/** A private mesh with serve running and hosts joined, each writing under the one root. */
export interface PrivateFleet {
  pm: PrivateMesh;
  serve: Proc;
  hosts: Record<string, { host: Host; proc: Proc }>;
  root: string;
}

/** Fills CTX step by step (so a suite's after hook stops what was started even when a step fails): the mesh, the root, serve, then NODES joined in turn with outageEnv. */
export async function privateFleet(ctx: PrivateFleet, nodes: string[]): Promise<void> {
  ctx.pm = await privateMesh();
  ctx.root = root();
  ctx.serve = await ctx.pm.serve();
  ctx.hosts = {};
  for (const n of nodes) ctx.hosts[n] = await ctx.pm.joined(n, outageEnv(ctx.root));
}

/** Stops what privateFleet started, as far as it got; FROZEN first (a host a test may have left SIGSTOPped) is let go on, so that it can be stopped. */
export async function stopFleet(ctx: Partial<PrivateFleet>, frozen?: Proc): Promise<void> {
  try {
    frozen?.child.kill('SIGCONT');
  } catch {
    /* gone */
  }
  await ctx.pm?.stop();
  if (ctx.root) rmSync(ctx.root, { recursive: true, force: true });
}
