// The test run: start one throwaway PostgreSQL and one RabbitMQ, run every
// suite file in its own process (a fresh database and vhost each, and a temp
// dir of its own as TMPDIR), stop both servers whatever happened, and print
// the totals as "N passed, N failed". A passing suite leaves nothing behind;
// a failed one keeps its temp dir, database and vhost and names them, and a
// failed run keeps the servers' data dir and says how to start it again.
import { mkdtempSync, mkdirSync, writeFileSync, readdirSync, statSync, rmSync, chmodSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { startServers, type Private } from './harness/private.js';
import { leftovers, type Leftover } from './harness/leftovers.js';
import { deleteVhost } from './harness/mesh.js';
import { pgBin } from './harness/postgres.js';
import { runFile as runOne, type Outcome } from './harness/run_file.js';

const here = fileURLToPath(new URL('.', import.meta.url));
// dist/test/ runs; test/ is where each suite's source must still be.
const SOURCE = fileURLToPath(new URL('../../test/', import.meta.url));
const args = process.argv.slice(2);
const mode = args.includes('--bench') ? 'bench' : args.includes('--faults') ? 'faults' : 'test';
const only = args.filter((a) => !a.startsWith('--'));
const jobs = Number(process.env.MESH_TEST_JOBS ?? 2);
const fileTimeout = Number(process.env.MESH_TEST_FILE_TIMEOUT ?? 600) * 1000;
// A serial suite may boot whole machines (test/machine): the first run also makes their root tree.
// A bench may install its peers (Puppet, Ansible) and run Ansible at 1,000 machines: two hours at most.
const serialTimeout = Number(process.env.MESH_TEST_SERIAL_FILE_TIMEOUT ?? (mode === 'bench' ? 7200 : 2400)) * 1000;

function find(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p, suffix));
    // Only a suite whose source is still there: tsc never removes the output of a file renamed or deleted.
    else if (name.endsWith(suffix) && existsSync(join(SOURCE, relative(here, p)).replace(/\.js$/, '.ts'))) out.push(p);
  }
  return out.sort();
}

const suffix = mode === 'bench' ? '.bench.js' : mode === 'faults' ? '.faults.js' : '.test.js';
let files = find(here, suffix);
if (mode === 'test') files = files.concat(find(here, '.faults.js'));
// Matched within dist/test/ only: a checkout whose own path holds NAME (a directory named for `--bench peers`) would match every file.
if (only.length) {
  // In the order the names were given: a mutant's run stops at its first red file, so its cheapest tests go first.
  const first = (f: string) => only.findIndex((o) => relative(here, f).includes(o));
  files = files.filter((f) => first(f) >= 0).sort((a, b) => first(a) - first(b));
}
if (files.length === 0) {
  console.error(`no ${suffix} files matched ${only.join(' ')}`);
  process.exit(2);
}

const tmp = mkdtempSync(join(tmpdir(), 'mesh-test-'));
chmodSync(tmp, 0o755); // the postgres user must reach its data dir below
let srv: Private | undefined;
let stopping = false;

let anyFailed = false;

async function stopAll(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await srv?.stop();
  // MESH_TEST_DISCARD (set by test/mutants.ts, whose runs are meant to fail): nothing kept, failed or not.
  if (process.env.MESH_TEST_DISCARD || (!process.env.MESH_TEST_KEEP && !anyFailed)) {
    rmSync(tmp, { recursive: true, force: true });
    return;
  }
  // A failed run keeps the servers' data (not the servers): start PostgreSQL again on it and look.
  if (srv) {
    const { pg, rabbit } = srv.servers;
    console.log(
      `[run] kept ${tmp}: the run's PostgreSQL data is in ${join(tmp, 'pg', 'pgdata')}, RabbitMQ's in ${rabbit.dir}.`,
    );
    console.log(
      `[run] to look: runuser -u postgres -- ${pgBin('postgres')} -D ${join(tmp, 'pg', 'pgdata')} -p ${pg.port} -k ${pg.socketDir} -c listen_addresses=127.0.0.1 &`,
    );
    console.log(
      `[run]          psql -h 127.0.0.1 -p ${pg.port} -U postgres DATABASE   (the failed suites' databases are named above); rm -rf ${tmp} when done`,
    );
  }
}

/** After a suite file: a passing one leaves nothing behind; a failed one keeps, and names, what it made. */
async function settle(dir: string, passed: boolean): Promise<string[]> {
  const left = leftovers(dir);
  if ((!passed && !process.env.MESH_TEST_DISCARD) || process.env.MESH_TEST_KEEP) return describe(dir, left);
  const shared = srv!.servers;
  const dbs = left.filter(
    (l): l is Extract<Leftover, { kind: 'database' }> => l.kind === 'database' && l.port === shared.pg.port,
  );
  if (dbs.length) {
    const root = postgres(`postgres://postgres@127.0.0.1:${shared.pg.port}/postgres`, { max: 1, onnotice: () => {} });
    try {
      for (const d of dbs) await root.unsafe(`drop database if exists "${d.name}" with (force)`);
    } finally {
      await root.end();
    }
  }
  const failed: string[] = [];
  for (const v of left)
    if (v.kind === 'vhost' && v.mgmtPort === shared.rabbit.mgmtPort)
      await deleteVhost(v.mgmtPort, shared.rabbit.admin, v.name, v.prefix).catch((e: Error) =>
        failed.push(`could not remove broker vhost ${v.name} (${e.message}): its queues stay until the run ends`),
      );
  rmSync(dir, { recursive: true, force: true });
  return failed;
}

function describe(dir: string, left: Leftover[]): string[] {
  const out = [`kept ${dir} (everything this suite made in its temp dir)`];
  for (const l of left) {
    if (l.kind === 'database')
      out.push(`kept database ${l.name} on 127.0.0.1:${l.port} (psql -h 127.0.0.1 -p ${l.port} -U postgres ${l.name})`);
    else if (l.kind === 'vhost')
      out.push(`kept broker vhost ${l.name} (accounts ${l.prefix}*) on the broker with management port ${l.mgmtPort}`);
    else
      out.push(
        `kept the suite's own servers' data in ${l.dir} (PostgreSQL data ${join(l.dir, 'pg', 'pgdata')}, port ${l.pgPort} when it ran)`,
      );
  }
  return out;
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    void stopAll().then(() => process.exit(130));
  });
}

function runFile(file: string, runEnv: NodeJS.ProcessEnv): Promise<Outcome> {
  // A temp dir of the suite's own, as its TMPDIR: what it leaves is found, and removed or kept, in one place.
  const dir = join(tmp, 'suites', relative(here, file).replace(/[\\/]/g, '_'));
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755); // the postgres user must reach a private data dir below
  const env = { ...runEnv, TMPDIR: dir, MESH_TEST_SUITE_DIR: dir };
  const limitMs = file.includes('.serial.') ? Math.max(fileTimeout, serialTimeout) : fileTimeout;
  return runOne(file, { env, limitMs, label: relative(here, file), bench: mode === 'bench' }).then(async (o) => {
    const kept = await settle(dir, o.failed === 0 && o.code === 0);
    if (kept.length) o.out += '\n' + kept.map((k) => `[run] ${k}`).join('\n') + '\n';
    return o;
  });
}

async function main(): Promise<number> {
  const t0 = Date.now();
  srv = await startServers(tmp);
  const { pg, rabbit } = srv;
  console.log(
    `[run] PostgreSQL on 127.0.0.1:${pg.port}, RabbitMQ amqp ${rabbit.amqpPort} amqps ${rabbit.amqpsPort} management ${rabbit.mgmtPort} (${((Date.now() - t0) / 1000).toFixed(1)}s)`,
  );
  const serversFile = join(tmp, 'servers.json');
  writeFileSync(serversFile, JSON.stringify(srv.servers), { mode: 0o600 });
  // Suites run hosts in this machine's own network namespace: they hold the
  // firewalls they are declared and never load them here (host/apply/firewall.ts).
  const env = { ...process.env, MESH_TEST_SERVERS: serversFile, MESH_HOST_FIREWALL: 'off' };

  const queue = [...files];
  const outcomes: Outcome[] = [];
  // Suites marked serial (their name ends .serial.test.js) run alone: they stop the broker.
  const serial = queue.filter((f) => f.includes('.serial.'));
  const parallel = queue.filter((f) => !f.includes('.serial.'));
  // MESH_TEST_BAIL (set by test/mutants.ts): one red file answers, so no file starts after one failed.
  const bailed = () => !!process.env.MESH_TEST_BAIL && anyFailed;
  const report = (o: Outcome) => {
    if (o.failed) anyFailed = true;
    const mark = o.failed ? 'FAIL' : 'ok  ';
    console.log(
      `${mark} ${relative(here, o.file).padEnd(44)} ${o.passed} passed, ${o.failed} failed (${o.seconds.toFixed(1)}s)`,
    );
    if (o.failed || process.env.MESH_TEST_VERBOSE || mode === 'bench')
      console.log(
        o.out
          .split('\n')
          .map((l) => '     ' + l)
          .join('\n'),
      );
    outcomes.push(o);
  };
  await Promise.all(
    Array.from({ length: Math.max(1, jobs) }, async () => {
      for (let f = parallel.shift(); f && !bailed(); f = parallel.shift()) report(await runFile(f, env));
    }),
  );
  for (const f of serial) if (!bailed()) report(await runFile(f, env));
  const passed = outcomes.reduce((a, o) => a + o.passed, 0);
  const failed = outcomes.reduce((a, o) => a + o.failed, 0);
  const skipped = outcomes.reduce((a, o) => a + o.skipped, 0);
  console.log(`\n[run] ${outcomes.length} files in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  return failed === 0 && skipped === 0 ? 0 : 1;
}

main().then(
  async (code) => {
    await stopAll();
    process.exit(code);
  },
  async (err) => {
    console.error(err);
    await stopAll();
    process.exit(1);
  },
);
