// P2 on a broker of this suite's own: a broker short of memory holds every
// connection that publishes and stops reading from it. Serve answers nodes on
// a connection of its own, so while the broker holds it serve still settles
// what needs no answer (the broker reads its acks and the control queue
// drains), an ask that needs an answer is handed back without counting as a
// try, and once the broker lets go the ask is answered, not set aside. The
// outbox's own connection is held too: serve says so, and its drain loop,
// which feeds systemd's watchdog, still says alive while the broker holds it
// (a restart would not make the broker let go).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { notifySocket, type NotifySocket } from '../harness/notify_socket.js';
import { privateServers, type Private } from '../harness/private.js';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { BIN } from '../harness/rabbitmq.js';
import { connectAsHost } from '../harness/node_account.js';
import { cli, until } from '../declare/helpers.js';
import { run } from '../../src/sys/proc.js';
import { publish } from '../../src/broker/publish.js';
import { EXCHANGE, CONTROL_QUEUE } from '../../src/broker/topology.js';
import { TRIES } from '../../src/serve/intake.js';
import type { Connection } from '../../src/broker/connect.js';

interface Ctx {
  srv: Private;
  notify: NotifySocket;
  mesh: Mesh;
  serve?: Proc;
  conn?: Connection;
}
const Alarm = suite<Ctx>('P2 a broker that holds publishers does not hold serve');

Alarm.before(async (ctx) => {
  ctx.srv = await privateServers();
  const socket = join(ctx.srv.servers.tmp, 'notify.sock');
  ctx.notify = await notifySocket(socket);
  // A third of this between pings: a drain loop sweep a second.
  const serveEnv = { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '3000000' };
  ctx.mesh = await freshMesh({ servers: ctx.srv.servers, serveEnv });
});
Alarm.after(async (ctx) => {
  await ctx.conn?.close().catch(() => {});
  await ctx.mesh.stop().catch(() => {});
  await ctx.srv.stop();
  ctx.notify?.stop();
});

const ctl = (ctx: Ctx, args: string[]) => {
  const r = ctx.srv.servers.rabbit;
  return run(join(BIN, 'rabbitmqctl'), ['-q', '-n', r.nodename, ...args], {
    env: { ...process.env, ...r.ctlEnv },
    timeoutMs: 60_000,
  });
};

/** Messages on the control queue, ready and unacked, as rabbitmqctl reads them. */
async function waiting(ctx: Ctx): Promise<number> {
  const cols = ['name', 'messages_ready', 'messages_unacknowledged'];
  const out = await ctl(ctx, ['list_queues', '-p', ctx.mesh.vhost, ...cols, '--no-table-headers']);
  const row = out
    .split('\n')
    .map((l) => l.split(/\s+/))
    .find((f) => f[0] === CONTROL_QUEUE);
  if (!row) throw new Error(`no ${CONTROL_QUEUE} in rabbitmqctl list_queues: ${out}`);
  return Number(row[1]) + Number(row[2]);
}

const count = (p: Proc, re: RegExp) => (p.output().match(new RegExp(re.source, 'g')) ?? []).length;

Alarm(
  'while the broker holds publishers, serve settles what needs no answer and hands asks back untried; once it lets go, they are answered',
  async (ctx) => {
    const { mesh } = ctx;
    ctx.serve = await mesh.serve();
    const h = mesh.host('asker');
    const r = await h.enrol(await mesh.token('asker'));
    assert.is(r.code, 0, r.stderr);
    await until('the enrolment settled', async () => (await waiting(ctx)) === 0);
    await ctx.serve.stop();

    // Serve is away: an ask that needs an answer, then reports that need none (malformed: refused and settled).
    const { conn, user } = await connectAsHost(h.dir, 'node asker');
    ctx.conn = conn;
    const ch = await conn.createConfirmChannel();
    const reports = 40;
    await publish(ch, EXCHANGE, 'recover', Buffer.from('{}'), { userId: user });
    for (let i = 0; i < reports; i++)
      await publish(ch, EXCHANGE, 'report', Buffer.from(`not a report ${i}`), { userId: user });
    await conn.close();
    ctx.conn = undefined;
    // A quorum queue's counts reach rabbitmqctl on the broker's tick: waited for, never read once.
    await until('the ask and the reports wait for serve', async () => (await waiting(ctx)) === reports + 1);

    // The broker holds every publisher (a memory alarm), and serve comes back.
    await ctl(ctx, ['set_vm_memory_high_watermark', '0']);
    try {
      const serve = (ctx.serve = await mesh.serve());
      const refused = /report from \S+asker refused: /;
      await until(
        'the reports settled while the broker holds publishers',
        async () => count(serve, refused) === reports,
        60_000,
      );
      await until('the control queue drained but for the ask', async () => (await waiting(ctx)) === 1, 60_000);
      assert.ok(/the broker holds serve's answers/.test(serve.output()), serve.output());
      // Handed back more often than a message serve cannot record is tried: none of it counted.
      await until(
        'the ask handed back more than TRIES times',
        async () => count(serve, /recover from \S+asker handed back: the broker/) > TRIES,
        60_000,
      );
      assert.is(count(serve, /recover: handed asker /), 0, 'no answer while the broker holds publishers');
      // A declaration owed meanwhile waits in the outbox, and serve says why.
      await cli(mesh, 'declare', 'asker');
      await serve.waitFor(/the broker holds the outbox's publishes \(.+\); what is owed waits until it lets go/);
      const pinged = ctx.notify.pings();
      await until('the drain loop says alive while the broker holds it', async () => ctx.notify.pings() >= pinged + 3);
    } finally {
      await ctl(ctx, ['set_vm_memory_high_watermark', '0.4']);
    }

    const serve = ctx.serve!;
    await until(
      'the ask answered once the broker lets go',
      async () => count(serve, /recover: handed asker /) === 1,
      60_000,
    );
    assert.ok(/the broker lets serve's answers go again/.test(serve.output()), serve.output());
    await serve.waitFor(/the broker lets the outbox's publishes go again/);
    await until('the owed declaration delivered', async () => {
      const [o] = await mesh.store
        .admin`select count(*)::int as n from assignment.outbox where node = 'asker' and delivered_at is null`;
      return o!.n === 0;
    });
    const [d] = await mesh.store.admin`select count(*)::int as n from inventory.dead_letter`;
    assert.is(d!.n, 0, 'nothing set aside');
    await until('the control queue empty', async () => (await waiting(ctx)) === 0, 30_000);
  },
);

Alarm.run();
