// Growing the broker, on real RabbitMQ nodes: the first node's
// broker, made alone (mesh@localhost) with an account and a quorum queue, is
// started as a node of a cluster through rabbitmq-start.sh and keeps both
// (renamed to mesh-NAME@ADDRESS, nobody re-enrols; its quorum queues carried across by the bundle); the hand-over file is 0600 and
// refused when others may read it or when it is for another join; a second
// node given only that file's cookie joins and becomes a member of the
// quorum queue. Erlang traffic binds the overlay address (here 127.0.0.1 and
// 127.0.0.2 stand for two nodes' overlay addresses), and no secret is in a
// service's environment or argv.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { freePort } from '../harness/ports.js';
import { run, runAny } from '../../src/sys/proc.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { ManagementApi } from '../../src/broker/management.js';
import {
  ADMIN,
  PLUGINS,
  brokerConf,
  brokerEnv,
  brokerSpec,
  makeCertificate,
  START_SCRIPT,
} from '../../bundle/rabbitmq.js';
import {
  ctlEnv,
  clusterStatus,
  joinCluster,
  readCookie,
  readHandOver,
  writeHandOver,
  holdAndDrainQuorum,
  restoreQuorum,
  type HandOver,
} from '../../bundle/broker_cluster.js';
import { unitText } from '../../bundle/units.js';
import { DEFAULT_PORTS, paths, type Options } from '../../bundle/layout.js';

interface Node {
  o: Options;
  api: ManagementApi;
  child?: ChildProcess;
}
interface Ctx {
  dir: string;
  epmd: number;
  password: string;
  a: Node;
  b: Node;
  epmdEnv: NodeJS.ProcessEnv;
}
const T = suite<Ctx>("a broker node joins the first node's cluster");

async function node(dir: string, name: string, epmd: number, password: string): Promise<Node> {
  const ports = {
    ...DEFAULT_PORTS,
    amqp: await freePort(),
    amqps: await freePort(),
    mgmt: await freePort(),
    dist: await freePort(),
    epmd,
  };
  const o = {
    state: join(dir, name),
    home: join(dir, name, 'home'),
    hostDir: join(dir, name, 'host'),
    name,
    site: 'a',
    publicHost: '127.0.0.1',
    dialable: '',
    ports,
    roots: [],
    hostEnv: {},
  } as Options;
  const p = paths(o);
  mkdirSync(p.tls, { recursive: true, mode: 0o700 });
  const c = await makeCertificate('127.0.0.1', p.tls);
  writeFileSync(join(p.tls, 'broker.pem'), c.cert);
  writeFileSync(join(p.tls, 'broker.key'), c.key, { mode: 0o600 });
  writeFileSync(
    p.rabbitConf,
    brokerConf({
      amqp: ports.amqp,
      amqps: ports.amqps,
      mgmt: ports.mgmt,
      user: ADMIN,
      password,
      cert: join(p.tls, 'broker.pem'),
      key: join(p.tls, 'broker.key'),
      statsIntervalMs: 60_000,
    }),
    { mode: 0o600 },
  );
  writeFileSync(p.rabbitPlugins, PLUGINS);
  writeFileSync(p.rabbitEnv, '');
  return { o, api: new ManagementApi({ url: `http://127.0.0.1:${ports.mgmt}`, user: ADMIN, password }, 5_000) };
}

/** Start the node as its service would: the spec's argv and environment, nothing else. */
async function start(n: Node): Promise<void> {
  const s = brokerSpec(n.o);
  n.child = spawn(s.exec[0]!, s.exec.slice(1), {
    env: { PATH: process.env.PATH, ...s.env },
    stdio: 'ignore',
    detached: true,
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await n.api.raw('GET', '/overview')).ok) return;
    } catch {
      /* not yet */
    }
    if (n.child.exitCode !== null)
      throw new Error(`${s.env!.RABBITMQ_NODENAME} exited at start; see ${join(paths(n.o).rabbit, 'log')}`);
    if (Date.now() > deadline)
      throw new Error(`${s.env!.RABBITMQ_NODENAME} did not start; see ${join(paths(n.o).rabbit, 'log')}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function stop(n: Node): Promise<void> {
  const c = n.child;
  if (!c || c.exitCode !== null) return;
  const done = new Promise((r) => c.once('exit', r));
  await runAny('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-q', 'stop'], { env: ctlEnv(n.o), timeoutMs: 30_000 });
  const t = setTimeout(() => {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, 20_000);
  await done;
  clearTimeout(t);
}

T.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-broker-node-'));
  ctx.epmd = await freePort();
  ctx.password = randomBytes(18).toString('base64url');
  // One machine stands for two: one epmd answering on both "overlay" addresses.
  ctx.epmdEnv = {
    PATH: process.env.PATH,
    HOME: ctx.dir,
    ERL_EPMD_PORT: String(ctx.epmd),
    ERL_EPMD_ADDRESS: '127.0.0.1,127.0.0.2',
  };
  await run('epmd', ['-daemon'], { env: ctx.epmdEnv });
  ctx.a = await node(ctx.dir, 'first', ctx.epmd, ctx.password);
  ctx.b = await node(ctx.dir, 'second', ctx.epmd, ctx.password);
});
T.after(async (ctx) => {
  for (const n of [ctx.b, ctx.a]) if (n) await stop(n).catch(() => {});
  await runAny('epmd', ['-kill'], { env: ctx.epmdEnv });
});

T(
  'X1: alone, epmd and the distribution are on loopback; in a cluster, on the overlay address and loopback, never elsewhere',
  () => {
    const alone = brokerEnv('/d', 'mesh@localhost', { dist: 25673, epmd: 4373 });
    assert.is(alone.ERL_EPMD_ADDRESS, '127.0.0.1');
    assert.is(alone.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS, '-kernel inet_dist_use_interface {127,0,0,1}');
    assert.is(alone.RABBITMQ_USE_LONGNAME, undefined);
    const clustered = brokerEnv('/d', 'mesh-first@10.99.0.7', { dist: 25673, epmd: 4373 }, '10.99.0.7');
    assert.is(clustered.ERL_EPMD_ADDRESS, '127.0.0.1,10.99.0.7');
    assert.is(clustered.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS, '-kernel inet_dist_use_interface {10,99,0,7}');
    assert.is(clustered.RABBITMQ_USE_LONGNAME, 'true');
    assert.throws(() => brokerEnv('/d', 'mesh@x', { dist: 1, epmd: 2 }, '0.0.0.0/0'), /not an IPv4 overlay address/);
    const spec = brokerSpec({ ...structuredClone(DEFAULT_OPTIONS), brokerAddress: '10.99.0.7' });
    assert.is(spec.env!.RABBITMQ_NODENAME, 'mesh-first@10.99.0.7');
    assert.equal(spec.exec, ['/bin/sh', START_SCRIPT]);
  },
);

const DEFAULT_OPTIONS = {
  state: '/var/lib/mesh',
  home: '/etc/mesh',
  hostDir: '/var/lib/mesh-host',
  name: 'first',
  site: 'a',
  publicHost: '198.51.100.7',
  dialable: '',
  ports: DEFAULT_PORTS,
  roots: [],
  hostEnv: {},
} as Options;

T(
  'a broker that ran alone keeps its accounts, classic queues with their messages and its quorum queues when it starts as a node of a cluster (renamed, nobody re-enrols)',
  async (ctx) => {
    const api = ctx.a.api;
    await start(ctx.a);
    await api.putUser('node-web1', 'pw-web1');
    await api.call('PUT', '/exchanges/mesh/mesh', { type: 'topic', durable: true });
    await api.call('PUT', '/queues/mesh/mesh.control', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await api.call('POST', '/bindings/mesh/e/mesh/q/mesh.control', { routing_key: 'control.#' });
    await api.call('PUT', '/queues/mesh/node.web1', { durable: true });
    const publish = (key: string) =>
      api.call('POST', '/exchanges/mesh/mesh/publish', {
        properties: { delivery_mode: 2 },
        routing_key: key,
        payload: 'kept',
        payload_encoding: 'string',
      });
    await api.call('POST', '/bindings/mesh/e/mesh/q/node.web1', { routing_key: 'node.web1' });
    await publish('node.web1');
    // A quorum queue that does not empty: refused, naming it, and the publishers' hold lifted.
    await publish('control.report');
    await waitFor(
      async () =>
        Number((await api.call<{ messages?: number }>('GET', '/queues/mesh/mesh.control'))?.messages ?? 0) === 1,
    );
    try {
      await holdAndDrainQuorum(ctx.a.o, api, 'mesh', paths(ctx.a.o).quorumKept, 2);
      assert.unreachable('a quorum queue holding a message was renamed away');
    } catch (err) {
      assert.match((err as Error).message, /mesh\.control \(1 messages\) did not empty/);
    }
    const [n] = (await api.call<{ mem_alarm: boolean }[]>('GET', '/nodes'))!;
    assert.is(n!.mem_alarm, false, 'the hold is lifted after a refusal');
    await api.call('DELETE', '/queues/mesh/mesh.control/contents');

    await holdAndDrainQuorum(ctx.a.o, api, 'mesh', paths(ctx.a.o).quorumKept, 30);
    assert.is(statSync(paths(ctx.a.o).quorumKept).mode & 0o777, 0o600);
    await stop(ctx.a);
    ctx.a.o.brokerAddress = '127.0.0.1';
    await start(ctx.a);
    assert.equal(await restoreQuorum(api, 'mesh', paths(ctx.a.o).quorumKept), [
      'quorum queue(s) mesh.control declared again with their bindings',
    ]);
    assert.not.ok(existsSync(paths(ctx.a.o).quorumKept), 'the kept definitions are removed once declared');
    assert.ok(
      (await api.users()).some((u) => u.name === 'node-web1'),
      'the account made before the rename',
    );
    const classic = await api.call<{ messages: number }>('GET', '/queues/mesh/node.web1');
    await waitFor(
      async () => Number((await api.call<{ messages?: number }>('GET', '/queues/mesh/node.web1'))?.messages ?? 0) === 1,
    );
    assert.ok(classic);
    const q = await api.call<{ type: string; members: string[] }>('GET', '/queues/mesh/mesh.control');
    assert.is(q!.type, 'quorum');
    assert.equal(q!.members, ['mesh-first@127.0.0.1']);
    const b = await api.call<{ routing_key: string }[]>('GET', '/bindings/mesh/e/mesh/q/mesh.control');
    assert.equal(
      b!.map((x) => x.routing_key),
      ['control.#'],
    );
    assert.equal((await clusterStatus(ctx.a.o)).running_nodes, ['mesh-first@127.0.0.1']);
  },
);

async function waitFor(ok: () => Promise<boolean>, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error('waited in vain');
    await new Promise((r) => setTimeout(r, 250));
  }
}

T('the hand-over is 0600, and refused when others may read it or when it is for another join', async (ctx) => {
  const file = join(ctx.dir, 'hand-over-second.json');
  const h: HandOver = {
    first: { name: 'first', erlNode: 'mesh-first@127.0.0.1', address: '127.0.0.1' },
    node: { name: 'second', address: '127.0.0.2', public: '127.0.0.1' },
    ports: { amqps: 1, amqp: 2, mgmt: 3, epmd: ctx.epmd, dist: 4 },
    cookie: readCookie(ctx.a.o),
    adminPassword: ctx.password,
    cert: 'c',
    key: 'k',
  };
  await writeHandOver(file, h);
  assert.is(statSync(file).mode & 0o777, 0o600);
  chmodSync(file, 0o644);
  assert.throws(() => readHandOver(file, { first: 'first', node: 'second' }), /readable by others .*Erlang cookie/);
  chmodSync(file, 0o600);
  assert.throws(() => readHandOver(file, { first: 'hub', node: 'second' }), /written by first, not hub/);
  assert.throws(
    () => readHandOver(file, { first: 'first', node: 'web1' }),
    /is for second, and this machine is enrolled as web1/,
  );
  assert.is(readHandOver(file, { first: 'first', node: 'second' }).cookie, h.cookie);
});

T(
  'a second node with the cookie joins, sees the accounts, and becomes a member of the quorum queue; a second join changes nothing',
  async (ctx) => {
    const h = readHandOver(join(ctx.dir, 'hand-over-second.json'), { first: 'first', node: 'second' });
    ctx.b.o.brokerAddress = h.node.address;
    await writeAtomic(paths(ctx.b.o).rabbitCookie, h.cookie, 0o600);
    await start(ctx.b);
    const did = await joinCluster(ctx.b.o, h.first.erlNode);
    assert.ok(
      did.some((d) => d.startsWith('joined mesh-first@127.0.0.1')),
      did.join('; '),
    );
    assert.equal((await clusterStatus(ctx.b.o)).running_nodes?.sort(), [
      'mesh-first@127.0.0.1',
      'mesh-second@127.0.0.2',
    ]);
    assert.ok(
      (await ctx.b.api.users()).some((u) => u.name === 'node-web1'),
      "accounts are the cluster's",
    );
    const q = await ctx.a.api.call<{ members: string[] }>('GET', '/queues/mesh/mesh.control');
    assert.equal(q!.members.sort(), ['mesh-first@127.0.0.1', 'mesh-second@127.0.0.2']);
    const again = await joinCluster(ctx.b.o, h.first.erlNode);
    assert.not.ok(
      again.some((d) => d.startsWith('joined')),
      again.join('; '),
    );
  },
);

T(
  "no secret in a broker node's service: not the cookie, not the admin password, in its environment, argv or unit",
  async (ctx) => {
    const cookie = readCookie(ctx.a.o);
    for (const n of [ctx.a, ctx.b]) {
      const s = brokerSpec(n.o);
      const text = JSON.stringify(s) + unitText(s);
      assert.not.ok(text.includes(cookie), 'cookie');
      assert.not.ok(text.includes(ctx.password), 'password');
      assert.is(statSync(paths(n.o).rabbitCookie).mode & 0o077, 0, "the cookie file is the owner's alone");
    }
  },
);

T.run();
