// A host that knows more than one broker, on two independent real
// RabbitMQ brokers and an impostor between them. `mesh broker add` declares
// the list; the running host applies it to its identity; the broker it is on
// is halted, and it moves on by itself: the impostor presenting another
// certificate is refused in full (L2) and skipped, and it connects to the
// other real broker, saying which. The address order is the order tried:
// 127.0.0.1 (the home's), 127.0.0.2 (the impostor), 127.0.0.3 (the second).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import tls from 'node:tls';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { privateMesh, outageEnv, type PrivateMesh } from './private_mesh.js';
import { startRabbit, makeCertificate, adminApi, adminConnect, type Rabbit } from '../harness/rabbitmq.js';
import type { Proc, Host } from '../harness/mesh.js';
import { Accounts } from '../../src/broker/accounts.js';
import { declareTopology } from '../../src/broker/topology.js';
import { VHOST } from '../../bundle/rabbitmq.js';
import { loadIdentity } from '../../host/identity.js';

interface Ctx {
  pm: PrivateMesh;
  second: Rabbit;
  impostor: tls.Server;
  impostorPort: number;
  impostorFp: string;
  host: Host;
  proc: Proc;
  dirs: string[];
}
const L = suite<Ctx>('a host tries its brokers in turn (L1, L2)');

L.before(async (ctx) => {
  ctx.dirs = [];
  const base = mkdtempSync(join(tmpdir(), 'mesh-brokers-'));
  ctx.dirs.push(base);
  [ctx.pm, ctx.second] = await Promise.all([
    privateMesh(),
    startRabbit(join(base, 'second'), { listenAddress: '127.0.0.3' }),
  ]);
  // The impostor: TLS with a certificate of its own, where the mesh says a broker is.
  const c = await makeCertificate(mkdtempSync(join(base, 'impostor-')), 'mesh-broker');
  ctx.impostorFp = c.fingerprint;
  ctx.impostor = tls.createServer({ cert: readFileSync(c.cert), key: readFileSync(c.key) });
  ctx.impostor.on('tlsClientError', () => {});
  await new Promise<void>((r) => ctx.impostor.listen(0, '127.0.0.2', r));
  ctx.impostorPort = (ctx.impostor.address() as { port: number }).port;
  await ctx.pm.serve();
  const j = await ctx.pm.joined('web1', outageEnv());
  ctx.host = j.host;
  ctx.proc = j.proc;
  // Two independent brokers (not a cluster): the second is given what a cluster
  // would share, the node's account with the password it enrolled with and the topology.
  const r = ctx.second;
  await new Accounts({
    url: `http://127.0.0.1:${r.mgmtPort}`,
    user: r.admin.user,
    password: r.admin.password,
    vhost: VHOST,
  }).createNode('web1', loadIdentity(ctx.host.dir)!.password);
  const conn = await adminConnect(r, VHOST);
  try {
    await declareTopology(conn);
  } finally {
    await conn.close();
  }
});

L.after(async (ctx) => {
  await new Promise((r) => (ctx.impostor ? ctx.impostor.close(() => r(undefined)) : r(undefined)));
  await Promise.allSettled([ctx.pm?.stop(), ctx.second?.stop()]);
  if (!process.env.MESH_TEST_KEEP) for (const d of ctx.dirs ?? []) rmSync(d, { recursive: true, force: true });
});

const mesh = async (ctx: Ctx, ...args: string[]) => {
  const r = await ctx.pm.cli(args);
  if (r.code !== 0) throw new Error(`mesh ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
};

L('the list is declared and the running host takes it into its identity', async (ctx) => {
  const second = `127.0.0.3:${ctx.second.amqpsPort}`;
  const impostor = `127.0.0.2:${ctx.impostorPort}`;
  assert.match(
    await mesh(ctx, 'broker', 'add', second, '--fingerprint', ctx.second.fingerprint),
    /recorded the home's own broker/,
  );
  // The impostor is listed with the fingerprint of the real second broker: what a mistyped address, or a machine taken over, presents.
  await mesh(ctx, 'broker', 'add', impostor, '--fingerprint', ctx.second.fingerprint);
  await ctx.proc.waitFor(
    /now lists 127\.0\.0\.1:\d+, 127\.0\.0\.2:\d+, 127\.0\.0\.3:\d+; the link dials them from its next attempt/,
    30_000,
  );
  assert.equal(
    loadIdentity(ctx.host.dir)!.brokers.map((b) => `${b.host}:${b.port}`),
    [`127.0.0.1:${ctx.pm.rabbit.amqpsPort}`, impostor, second],
  );
});

L(
  'the broker it is on halted: the impostor is refused in full and skipped, and it connects to the other broker by itself',
  async (ctx) => {
    const mark = ctx.proc.output().length;
    await ctx.pm.rabbit.halt();
    await ctx.proc.waitFor(/lost the broker/, 30_000, mark);
    const refused = await ctx.proc.waitFor(/refusing the broker: (.+)/, 30_000, mark);
    assert.match(
      refused[1]!,
      new RegExp(
        `the broker at 127\\.0\\.0\\.2:${ctx.impostorPort} presented certificate ${ctx.impostorFp}, but this node pins ${ctx.second.fingerprint}`,
      ),
    );
    await ctx.proc.waitFor(new RegExp(`connected to 127\\.0\\.0\\.3:${ctx.second.amqpsPort}`), 30_000, mark);
    // The connection is the node's own account, on the second broker.
    const api = adminApi(ctx.second);
    const users = async () =>
      ((await (await api.raw('GET', '/connections')).json()) as { user: string }[]).map((c) => c.user);
    for (let i = 0; i < 50 && !(await users()).includes('node.web1'); i++) await new Promise((r) => setTimeout(r, 200));
    assert.ok((await users()).includes('node.web1'), `connections on the second broker: ${(await users()).join(', ')}`);
  },
);

L('the second broker lost too, the list goes round to the first again', async (ctx) => {
  const mark = ctx.proc.output().length;
  await ctx.pm.rabbit.resume();
  await ctx.second.halt();
  await ctx.proc.waitFor(/lost the broker/, 30_000, mark);
  await ctx.proc.waitFor(new RegExp(`connected to 127\\.0\\.0\\.1:${ctx.pm.rabbit.amqpsPort}`), 60_000, mark);
});

L.run();
