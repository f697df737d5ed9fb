// systemd's watchdog is fed from mesh-host's apply loop, not from a timer
// beside it. A real host runs under a NOTIFY_SOCKET this test reads (a unix
// datagram socket, as systemd's is; python3 binds it, Node has none): it says
// READY=1, then WATCHDOG=1 while its loop turns. Another process then holds
// the host's apply lock (what a bundle re-run holds, or any stuck apply), and
// a declaration arrives: the apply waits on the lock, the pings stop while the
// link and its heard go on, and the node reads wedged; the lock released, the
// pings come back and the declaration is applied.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc, type Host } from '../harness/mesh.js';
import { addModule, cli, root, b64, until } from '../declare/helpers.js';
import { lockPath } from '../../host/apply/lock.js';
import { notifySocket, type NotifySocket } from '../harness/notify_socket.js';

interface Ctx {
  mesh: Mesh;
  host: Host;
  proc: Proc;
  root: string;
  socket: string;
  notify: NotifySocket;
  holder?: ChildProcess;
}

const W = suite<Ctx>('watchdog: fed from the apply loop');

W.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.root = root();
  ctx.socket = join(ctx.root, 'notify.sock');
  ctx.notify = await notifySocket(ctx.socket);
  await ctx.mesh.serve();
  const j = await ctx.mesh.joined('dog1', {
    MESH_HOST_ROOTS: ctx.root,
    MESH_HOST_HEARD_SECONDS: '1',
    NOTIFY_SOCKET: ctx.socket,
    // A third of this between pings: several a second.
    WATCHDOG_USEC: '900000',
  });
  ctx.host = j.host;
  ctx.proc = j.proc;
});

W.after(async (ctx) => {
  try {
    if (ctx.holder?.pid) process.kill(-ctx.holder.pid, 'SIGKILL');
  } catch {
    /* ended already, by the test */
  }
  await ctx.mesh.stop();
  ctx.notify.stop();
});

const pings = (ctx: Ctx) => ctx.notify.pings();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

W(
  'ready, then alive while the apply loop turns; silent while an apply is stuck, though the link lives',
  async (ctx) => {
    const { mesh } = ctx;
    await until('READY=1', async () => ctx.notify.said.some((l) => l.includes('READY=1')));
    await until('pings', async () => pings(ctx) >= 3);
    await mesh.store.admin`select inventory.set_wedged_after(1)`;

    // Another process holds the apply lock: the next apply waits on it.
    // Its own process group: flock and its sleep end together, by the group's id.
    ctx.holder = spawn('flock', [lockPath(ctx.host.dir), 'sleep', '600'], { stdio: 'ignore', detached: true });
    await addModule(mesh, 'd1', [{ kind: 'file', path: join(ctx.root, 'd1.conf'), content: b64('x'), mode: '0644' }]);
    const mark = ctx.proc.output().length;
    await cli(mesh, 'assign', 'd1', 'dog1');
    await until('dog1 wedged: here, its delivered declaration unapplied', async () => {
      const [r] = await mesh.store.admin`select state from inventory.node_status where name = 'dog1'`;
      return r?.state === 'wedged';
    });
    // The loop is stuck now; whatever turn was queued before it stuck has had many ping intervals to go.
    await sleep(2_000);
    const stuck = pings(ctx);
    const seen = (await mesh.store.admin`select last_seen from inventory.node where name = 'dog1'`)[0]!.last_seen;
    await sleep(3_000);
    assert.is(pings(ctx), stuck, 'no ping while the apply loop is stuck');
    const later = (await mesh.store.admin`select last_seen from inventory.node where name = 'dog1'`)[0]!.last_seen;
    assert.ok(later > seen, 'the link and its heard went on');
    assert.not.match(ctx.proc.output().slice(mark), /applied declaration/);

    process.kill(-ctx.holder.pid!, 'SIGKILL');
    await ctx.proc.waitFor(/applied declaration \d+/, 30_000, mark);
    await until('pings again', async () => pings(ctx) > stuck);
  },
);

W.run();
