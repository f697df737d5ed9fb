// A throwaway RabbitMQ node: its own node name, ports, config, data and log
// dirs, its own epmd port and Erlang cookie (HOME), TLS on a free port with a
// self-signed certificate, the management API on loopback. Never a broker
// someone else started: every port is fresh and the node name is unique.
// brokerNode is one node however it is used; startRabbit is one node alone,
// test/harness/rabbit_cluster.ts three of them joined.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { freePort } from './ports.js';
import { run } from '../../src/sys/proc.js';
import { ManagementApi } from '../../src/broker/management.js';
import {
  ADMIN,
  brokerConf,
  brokerEnv,
  PLUGINS,
  makeCertificate as makeBrokerCertificate,
} from '../../bundle/rabbitmq.js';

export interface Rabbit {
  amqpPort: number; // plaintext, loopback only: the control plane's hop
  amqpsPort: number; // TLS: what nodes dial
  mgmtPort: number;
  admin: { user: string; password: string };
  fingerprint: string; // sha256 of the certificate, hex with colons
  certPath: string;
  nodename: string;
  env: NodeJS.ProcessEnv;
  /** What rabbitmqctl needs besides the process's own environment to reach this node (paths, ports: no secret). */
  ctlEnv: Record<string, string>;
  stop(): Promise<void>;
  /** Stop the broker (keeping its data) and start it again later: for link tests. */
  halt(): Promise<void>;
  /** SIGKILL the broker's whole process group: a crash, not a shutdown. */
  kill(): Promise<void>;
  resume(): Promise<void>;
  /** Until the management API answers (the app is up), or the broker exits, or 120 s pass. */
  ready(): Promise<void>;
}

export const BIN = '/usr/lib/rabbitmq/bin';

/** What a test needs to act as a broker's admin (a Rabbit, or the run's broker in servers()). */
type AdminOf = Pick<Rabbit, 'amqpPort' | 'mgmtPort' | 'admin'>;

/** The broker's management API, as its admin. */
export const adminApi = (r: AdminOf) =>
  new ManagementApi({ url: `http://127.0.0.1:${r.mgmtPort}`, user: r.admin.user, password: r.admin.password });

/** An AMQP connection to VHOST as the broker's admin, on the loopback plaintext port: a test acting behind the mesh's back. */
export const adminConnect = (r: AdminOf, vhost: string) =>
  amqp.connect({
    protocol: 'amqp',
    hostname: '127.0.0.1',
    port: r.amqpPort,
    username: r.admin.user,
    password: r.admin.password,
    vhost,
  });

/** A broker certificate made as the bundle makes one, written into DIR as broker.pem and broker.key (0600). */
export async function makeCertificate(
  dir: string,
  cn: string,
): Promise<{ cert: string; key: string; fingerprint: string }> {
  const made = await makeBrokerCertificate(cn, dir);
  const cert = join(dir, 'broker.pem');
  const key = join(dir, 'broker.key');
  writeFileSync(cert, made.cert);
  writeFileSync(key, made.key, { mode: 0o600 });
  return { cert, key, fingerprint: made.fingerprint };
}

export interface NodeSpec {
  dir: string;
  nodename: string;
  admin: { user: string; password: string };
  /** epmd is shared by the nodes of one cluster: each finds the others through it. */
  ports: { amqp: number; amqps: number; mgmt: number; dist: number; epmd: number };
  listenAddress?: string;
  /** The Erlang cookie (HOME/.erlang.cookie): one for every node of a cluster. Unset: the node makes its own. */
  cookie?: string;
}

/** One node, configured as the bundle configures it (one writer), not started yet. */
export async function brokerNode(spec: NodeSpec): Promise<Rabbit> {
  const { dir, nodename, admin, ports } = spec;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { cert, key, fingerprint } = await makeCertificate(dir, 'mesh-broker');
  writeFileSync(
    join(dir, 'rabbitmq.conf'),
    brokerConf({
      amqp: ports.amqp,
      amqps: ports.amqps,
      amqpsAddress: spec.listenAddress,
      mgmt: ports.mgmt,
      user: admin.user,
      password: admin.password,
      cert,
      key,
      statsIntervalMs: 60_000,
    }),
    { mode: 0o600 },
  );
  writeFileSync(join(dir, 'enabled_plugins'), PLUGINS);
  writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
  if (spec.cookie) writeFileSync(join(dir, '.erlang.cookie'), spec.cookie, { mode: 0o400 });
  const ctlEnv = brokerEnv(dir, nodename, { dist: ports.dist, epmd: ports.epmd });
  const env: NodeJS.ProcessEnv = { ...process.env, ...ctlEnv, RABBITMQ_NODE_PORT: String(ports.amqp) };
  let child: ChildProcess | undefined;
  const api = new ManagementApi(
    { url: `http://127.0.0.1:${ports.mgmt}`, user: admin.user, password: admin.password },
    5_000,
  );
  const ready = async () => {
    const c = child!;
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        if ((await api.raw('GET', '/overview')).ok) break;
      } catch {
        /* not yet */
      }
      if (c.exitCode !== null)
        throw new Error(`RabbitMQ ${nodename} exited at start (code ${c.exitCode}); see ${join(dir, 'log')}`);
      if (Date.now() > deadline)
        throw new Error(`RabbitMQ ${nodename} did not start within 120s; see ${join(dir, 'log')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const start = async () => {
    child = spawn(join(BIN, 'rabbitmq-server'), [], { env, stdio: 'ignore', detached: true });
    await ready();
  };
  const halt = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const done = new Promise((r) => c.once('exit', r));
    // rabbitmqctl can hang on a node in a bad state: the kill comes regardless.
    const t = setTimeout(() => {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 20_000);
    try {
      await run(join(BIN, 'rabbitmqctl'), ['-n', nodename, 'stop'], { env, timeoutMs: 15_000 });
    } catch {
      /* fall through to kill */
    }
    await done;
    clearTimeout(t);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const done = new Promise((r) => c.once('exit', r));
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    await done;
  };
  return {
    amqpPort: ports.amqp,
    amqpsPort: ports.amqps,
    mgmtPort: ports.mgmt,
    admin,
    fingerprint,
    certPath: cert,
    nodename,
    env,
    ctlEnv,
    halt,
    kill,
    resume: start,
    ready,
    async stop() {
      await halt();
      // The epmd this node started on its own port, and nothing else's.
      try {
        await run('epmd', ['-kill'], { env });
      } catch {
        /* already gone */
      }
    },
  };
}

export async function freePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const ports = await Promise.all(names.map(() => freePort()));
  return Object.fromEntries(names.map((n, i) => [n, ports[i]])) as Record<K, number>;
}

export const newAdmin = () => ({ user: ADMIN, password: randomBytes(18).toString('base64url') });

export async function startRabbit(dir: string, opts: { listenAddress?: string } = {}): Promise<Rabbit> {
  const ports = await freePorts(['amqp', 'amqps', 'mgmt', 'dist', 'epmd'] as const);
  const node = await brokerNode({
    dir,
    nodename: `mesh-${randomBytes(4).toString('hex')}@localhost`,
    admin: newAdmin(),
    ports,
    listenAddress: opts.listenAddress,
  });
  await node.resume();
  return node;
}
