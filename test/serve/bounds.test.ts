// P2 on real servers: one node cannot starve or fill the control plane. A
// node floods mesh.control with a thousand large reports and five hundred
// recovers while another node enrols and reports: the other node goes
// through, serve answers the flooder's recover once, refuses the rest with
// their codes, and what serve holds stays bounded (its peak resident memory,
// read from /proc, against its prefetch times its largest intake limit). A
// message serve cannot record is set aside with why after a few tries, not
// retried for ever. A node asking for an agent package's chunks in a loop is
// handed each once in the interval and refused the rest (MSHZ9), while
// another node is handed them. The broker bounds mesh.control and node
// accounts itself.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { until } from '../declare/helpers.js';
import { connectAsHost } from '../harness/node_account.js';
import type { Connection } from '../../src/broker/connect.js';
import { EXCHANGE, CONTROL_QUEUE } from '../../src/broker/topology.js';
import { publish } from '../../src/broker/publish.js';
import { writeReport, REPORT_CAPS } from '../../src/wire/report.js';
import { INTAKE_LIMITS, PREFETCH } from '../../src/serve/intake.js';
import { CONTROL_QUEUE_BOUND, NODE_ACCOUNT_LIMITS } from '../../src/broker/accounts.js';
import type { ConfirmChannel } from 'amqplib';
import { queueOf } from '../../src/wire/names.js';
import { writePackageAsk } from '../../src/wire/agent_package.js';
import { VERSION } from '../../src/sys/version.js';
import { makePackage } from '../host/agent_packages.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  conns: Connection[];
}
const P2 = suite<Ctx>('P2 one node cannot starve or fill the control plane');

P2.before(async (ctx) => {
  ctx.conns = [];
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
P2.after(async (ctx) => {
  await Promise.allSettled(ctx.conns.map((c) => c.close()));
  await ctx.mesh?.stop();
});

/** kB of the serve process's resident memory: now (VmRSS) or its peak (VmHWM). */
const memory = (p: Proc, field: 'VmRSS' | 'VmHWM') => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${p.child.pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/${p.child.pid}/status`);
  return Number(m[1]) * 1024;
};

/** An enrolled node's own account, connected as its host would be, and a confirm channel on it. */
async function asNode(ctx: Ctx, name: string): Promise<{ ch: ConfirmChannel; user: string }> {
  const h = ctx.mesh.host(name);
  const r = await h.enrol(await ctx.mesh.token(name));
  assert.is(r.code, 0, r.stderr);
  const { conn, user } = await connectAsHost(h.dir, `node ${name}`);
  ctx.conns.push(conn);
  return { ch: await conn.createConfirmChannel(), user };
}

const count = (p: Proc, re: RegExp) => (p.output().match(new RegExp(re.source, 'g')) ?? []).length;

P2(
  "a thousand large reports and five hundred recovers from one node: another node's enrolment and reports go through, serve's memory stays bounded",
  async (ctx) => {
    const { mesh, serve } = ctx;
    await mesh.store.admin`select inventory.set_answer_every(interval '1 hour')`;
    const hog = await asNode(ctx, 'hog');
    const baseline = memory(serve, 'VmRSS');

    // Half over the intake limit (refused unread), half under it but over a list's cap (refused read).
    const unread = Buffer.alloc(INTAKE_LIMITS.report + 1, 'x');
    const entry = { id: 'file:/a', kind: 'file', target: `/${'a'.repeat(150)}`, origin: 'declared', digest: 'x' };
    const capped = writeReport({
      v: 1,
      serial: 1,
      held: Array.from({ length: REPORT_CAPS.held + 1 }, () => entry) as never,
      failed: [],
      corrected: [],
      superseded: [],
    });
    assert.ok(capped.length < INTAKE_LIMITS.report, 'the capped report is within the intake limit');
    const sent = { unread: 0, capped: 0, recover: 0, rejected: 0 };
    const send = (key: string, body: Buffer, what: keyof typeof sent) =>
      publish(hog.ch, EXCHANGE, key, body, { userId: hog.user }).then(
        () => void sent[what]++,
        // The broker's bound on mesh.control refuses what is over it (reject-publish): told, never blocked.
        () => void sent.rejected++,
      );
    const flood = (async () => {
      for (let i = 0; i < 1000; i += 20) {
        const batch: Promise<void>[] = [];
        for (let j = i; j < i + 20; j++) {
          batch.push(send('report', j % 2 ? capped : unread, j % 2 ? 'capped' : 'unread'));
          if (j % 2) batch.push(send('recover', Buffer.from('{}'), 'recover'));
        }
        await Promise.all(batch);
      }
    })();

    // Meanwhile another node enrols, connects and reports.
    const calm = await mesh.joined('calm');
    await until(
      "calm's report recorded",
      async () => (await mesh.store.admin`select 1 from inventory.report where node = 'calm'`).length > 0,
      120_000,
    ).catch((err: Error) => {
      // What held it up is in what serve and calm said last, the flood's own lines left out.
      const tail = (p: Proc) =>
        p
          .output()
          .split('\n')
          .filter((l) => !l.includes('hog'))
          .slice(-40)
          .join('\n');
      throw new Error(`${err.message}\n--- serve said last:\n${tail(serve)}\n--- calm said last:\n${tail(calm.proc)}`);
    });
    await flood;
    assert.is(sent.unread + sent.capped + sent.recover + sent.rejected, 1500, 'every publish was confirmed or refused');

    // Everything confirmed is settled: refused with its code, or answered once.
    await until(
      'serve settled every message of the flood',
      async () => {
        const unreadSaid = count(serve, /report from \S+hog refused: report is \d+ bytes, over mesh serve's limit/);
        const cappedSaid = count(serve, /report from \S+hog refused: report lists \d+ held, over the cap/);
        const recoverSaid = count(serve, /recover: handed hog /) + count(serve, /hog asked for a recover again/);
        return unreadSaid === sent.unread && cappedSaid === sent.capped && recoverSaid === sent.recover;
      },
      180_000,
    );
    assert.is(count(serve, /recover: handed hog /), 1, "the flooder's recover answered once in the interval");
    assert.is(count(serve, /hog asked for a recover again/), sent.recover - 1, 'the rest refused (MSHS3)');
    assert.ok(sent.unread + sent.capped > 0);

    // What serve held: its peak resident memory above where it started, against prefetch times the largest limit.
    const held = PREFETCH * Math.max(...Object.values(INTAKE_LIMITS));
    const grew = memory(serve, 'VmHWM') - baseline;
    const bound = 3 * held;
    assert.ok(grew < bound, `serve grew ${grew >> 20} MiB, within ${bound >> 20} MiB (prefetch ${PREFETCH} x limit)`);

    // The other node's account is still whole: it reports and is here.
    const [state] = await mesh.store.admin`select state from inventory.node_status where name = 'calm'`;
    assert.is(state!.state, 'here');
    await calm.proc.stop();
  },
);

P2('recovers asked again inside the interval are refused, and answered once at its end, not lost', async (ctx) => {
  const { mesh, serve } = ctx;
  // A node's queue is not persistent: the answer given first may be gone, so the node gets it again, once.
  await mesh.store.admin`select inventory.set_answer_every(interval '2 seconds')`;
  try {
    const again = await asNode(ctx, 'again');
    const mark = serve.output().length;
    const since = () => serve.output().slice(mark);
    const said = (re: RegExp) => (since().match(new RegExp(re.source, 'g')) ?? []).length;
    for (let i = 0; i < 3; i++) await publish(again.ch, EXCHANGE, 'recover', Buffer.from('{}'), { userId: again.user });
    await until(
      'the first recover answered and the other two refused',
      async () => said(/recover: handed again /) === 1 && said(/again asked for a recover again/) === 2,
      60_000,
    );
    await serve.waitFor(/recover: at the interval's end, handed again its newest declaration/, 30_000, mark);
    assert.is(
      said(/at the interval's end, handed again /),
      1,
      'one deferred answer for the two asked inside the interval',
    );
  } finally {
    await mesh.store.admin`select inventory.set_answer_every(interval '1 hour')`;
  }
});

P2(
  "agent package chunks asked for in a loop: handed once in the interval, the rest refused (MSHZ9) unread; another node's ask is answered",
  async (ctx) => {
    const { mesh, serve } = ctx;
    await mesh.store.admin`select inventory.set_answer_every(interval '1 hour')`;
    const [major, minor, patch] = VERSION.split('-')[0]!.split('.').map(Number) as [number, number, number];
    const next = `${major}.${minor}.${patch + 1}`;
    const work = mkdtempSync(join(tmpdir(), 'mesh-chunk-bounds-'));
    const deb = await makePackage(work, next, { empty: true });
    for (const args of [
      ['agent', 'add', deb],
      ['agent', 'upgrade', '--to', next],
    ]) {
      const r = await mesh.cli(args);
      assert.is(r.code, 0, r.stderr);
    }
    const [pkg] = await mesh.store.admin`select sha256, chunks from catalogue.agent_package where version = ${next}`;
    const sha256 = pkg!.sha256 as string;
    const chunks = Number(pkg!.chunks);
    const flooder = await asNode(ctx, 'chunkhog');
    const other = await asNode(ctx, 'chunkcalm');
    /** The agent-chunk messages on a node's own queue, as its host would read them. */
    const received = async (node: string, n: { ch: ConfirmChannel }) => {
      const got: number[] = [];
      await n.ch.consume(queueOf(node), (m) => {
        if (!m) return;
        if (m.properties.type === 'agent-chunk' && m.properties.headers?.sha256 === sha256)
          got.push(Number(m.properties.headers.n));
        n.ch.ack(m);
      });
      return got;
    };
    const hogGot = await received('chunkhog', flooder);
    const calmGot = await received('chunkcalm', other);
    const ask = writePackageAsk({ sha256, from: 0, count: 4 });
    const mark = serve.output().length;
    const said = (re: RegExp) => (serve.output().slice(mark).match(new RegExp(re.source, 'g')) ?? []).length;
    const ASKS = 40;
    for (let i = 0; i < ASKS; i++)
      await publish(flooder.ch, EXCHANGE, 'agent.package', ask, { userId: flooder.user, type: 'agent.package' });
    await until(
      'serve refused every ask of the flood after the first, naming MSHZ9',
      async () =>
        said(/agent package: refused chunkhog: chunkhog asked again for chunks 0 to \d+ .*\(MSHZ9\)/) === ASKS - 1,
      120_000,
    );
    await until("the first ask answered on the flooder's queue", async () => hogGot.length >= chunks, 30_000);
    assert.equal(hogGot, [...Array(chunks).keys()], 'each chunk handed once, however often it was asked for');
    // Another node asking the same is answered: the bound is each node's own.
    await publish(other.ch, EXCHANGE, 'agent.package', ask, { userId: other.user, type: 'agent.package' });
    await until('the other node is handed the chunks', async () => calmGot.length >= chunks, 60_000);
    assert.equal(calmGot, [...Array(chunks).keys()]);
    assert.is(said(/refused chunkcalm/), 0, 'the other node was refused');
    rmSync(work, { recursive: true, force: true });
  },
);

P2('a message serve cannot record is set aside with why after a few tries, not retried for ever', async (ctx) => {
  const { mesh, serve } = ctx;
  const stuck = await asNode(ctx, 'stuck');
  // The store cannot keep this node's reports: an error no code of the register names, as a full index would raise.
  await mesh.store.admin`create function inventory.test_refuse_stuck() returns trigger language plpgsql as $$
    begin raise exception 'index row size exceeds maximum for this test' using errcode = '54000'; end $$`;
  await mesh.store.admin`create trigger test_refuse_stuck before insert or update on inventory.report
    for each row when (new.node = 'stuck') execute function inventory.test_refuse_stuck()`;
  try {
    const mark = serve.output().length;
    const body = writeReport({ v: 1, serial: 0, held: [], failed: [], corrected: [], superseded: [] });
    await publish(stuck.ch, EXCHANGE, 'report', body, { userId: stuck.user, messageId: 'stuck-1' });
    await serve.waitFor(/report from \S+stuck set aside after 5 tries/, 60_000, mark);
    const [row] = await mesh.store
      .admin`select node, kind, message_id, reason, tries, bytes from inventory.dead_letters`;
    assert.equal(row, {
      node: 'stuck',
      kind: 'report',
      message_id: 'stuck-1',
      reason: 'index row size exceeds maximum for this test',
      tries: 5,
      bytes: body.length,
    });
    await until(
      'mesh.control empty: the message is settled, not handed back',
      async () => {
        const q = (await (
          await mesh.mgmt('GET', `/queues/${encodeURIComponent(mesh.vhost)}/${CONTROL_QUEUE}`)
        ).json()) as {
          messages?: number;
        };
        return q.messages === 0;
      },
      30_000,
    );
  } finally {
    await mesh.store.admin`drop trigger test_refuse_stuck on inventory.report`;
    await mesh.store.admin`drop function inventory.test_refuse_stuck()`;
  }
});

P2('the broker bounds mesh.control (reject-publish) and each node account (connections, channels)', async (ctx) => {
  const { mesh } = ctx;
  const q = (await (await mesh.mgmt('GET', `/queues/${encodeURIComponent(mesh.vhost)}/${CONTROL_QUEUE}`)).json()) as {
    effective_policy_definition?: Record<string, unknown>;
  };
  assert.equal(
    q.effective_policy_definition,
    {
      'max-length': CONTROL_QUEUE_BOUND.messages,
      'max-length-bytes': CONTROL_QUEUE_BOUND.bytes,
      overflow: 'reject-publish',
    },
    'mesh.control refuses what is over its bound rather than filling the broker',
  );
  const user = `${mesh.prefix}node.hog`;
  const limits = (await (await mesh.mgmt('GET', `/user-limits/${encodeURIComponent(user)}`)).json()) as {
    value: Record<string, number>;
  }[];
  assert.equal(limits[0]?.value, NODE_ACCOUNT_LIMITS);
});

P2.run();
