// Hostile input against the running programs: a node account throws junk at
// every control-queue kind, and junk, forgeries and replays land on a node's
// queue. Each is refused and said; the processes keep running; nothing is
// applied or recorded that should not be; a message that should be refused
// and is not said counts as lost.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import amqp from 'amqplib';
import { servers } from '../harness/servers.js';
import { addModule, cli, b64, inject, until, liveNode, stopLiveNode, type LiveNode } from '../declare/helpers.js';
import { envelope } from '../../src/assignment/declare.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { signingPair } from '../../src/crypto/keys.js';
import { RUNS, tally, say, summary } from './tally.js';
import { publish } from '../../src/broker/publish.js';

type Ctx = LiveNode;
const Live = suite<Ctx>('hostile input against running programs');

Live.before(async (ctx) => {
  Object.assign(ctx, await liveNode());
  await addModule(ctx.mesh, 'site', [
    { kind: 'file', path: join(ctx.root, 'index.html'), content: b64('hello'), mode: '0644' },
  ]);
  // Serial 1 was the node's firewall, at enrolment; the assignment owes 2.
  await cli(ctx.mesh, 'assign', 'site', 'web1');
  await ctx.proc.waitFor(/applied declaration 2\b/);
  await until(
    'report',
    async () => (await ctx.mesh.store.admin`select 1 from inventory.report where node = 'web1'`).length > 0,
  );
});
Live.after(async (ctx) => {
  await stopLiveNode(ctx);
});

/** A connection as the node itself, with its own broker account. */
async function asNode(ctx: Ctx): Promise<amqp.ChannelModel> {
  const id = JSON.parse(readFileSync(join(ctx.host.dir, 'identity.json'), 'utf8'));
  return amqp.connect(
    {
      protocol: 'amqps',
      hostname: '127.0.0.1',
      port: servers().rabbit.amqpsPort,
      username: id.broker.user,
      password: id.password,
      vhost: id.broker.vhost,
    },
    { rejectUnauthorized: false },
  );
}

const count = (text: string, re: RegExp) => (text.match(new RegExp(re.source, 'g')) ?? []).length;

Live('junk on every control-queue kind: refused, said, serve keeps running', async (ctx) => {
  const conn = await asNode(ctx);
  const id = JSON.parse(readFileSync(join(ctx.host.dir, 'identity.json'), 'utf8'));
  const [before] = await ctx.mesh.store
    .admin`select serial, held::text as held from inventory.report where node = 'web1'`;
  const ch = await conn.createConfirmChannel();
  const kinds = ['enrol', 'report'];
  const n = Math.max(10, Math.floor(RUNS / 10));
  const mark = ctx.serve.output().length;
  const samples = fc.sample(
    fc.oneof(
      fc.uint8Array({ maxLength: 512 }).map((u) => Buffer.from(u)),
      fc.jsonValue({ maxDepth: 4 }).map((j) => Buffer.from(JSON.stringify(j))),
      fc.constant(Buffer.from('['.repeat(100_000))),
      fc.constant(Buffer.alloc(1 << 20, 0x41)),
    ),
    n,
  );
  for (const kind of kinds) {
    for (const body of samples) {
      await publish(ch, 'mesh', kind, body, { userId: id.broker.user, persistent: false });
      tally.tried++;
    }
  }
  // Each junk report is refused in the log; each junk enrolment is refused and answered with the one refusal,
  // or, over an enrolment's size, refused unread.
  const enrolRefused = /enrol: refused web1|serve: enrol from \S+ refused/;
  await until(
    'every junk message refused',
    async () => {
      const out = ctx.serve.output().slice(mark);
      return count(out, /report from \S+ refused/) >= n && count(out, enrolRefused) >= n;
    },
    60_000,
  ).finally(() => conn.close().catch(() => {}));
  const out = ctx.serve.output().slice(mark);
  const seen = Math.min(count(out, /report from \S+ refused/), n) + Math.min(count(out, enrolRefused), n);
  tally.refused += seen;
  tally.lost += 2 * n - seen;
  const [after] = await ctx.mesh.store
    .admin`select serial, held::text as held from inventory.report where node = 'web1'`;
  assert.equal(after, before, 'no junk was recorded as an account of the machine');
  // Serve is alive and still does its job.
  const h = ctx.mesh.host('web2');
  const r = await h.enrol(await ctx.mesh.token('web2'));
  assert.is(r.code, 0, r.stderr);
  tally.survived++;
  say(
    'control queue junk',
    `${2 * n} junk messages on enrol and report (random, deep, 1 MiB): ${seen} refused and said, serve enrolled web2 afterwards`,
  );
});

Live('the broker refuses impersonation and oversized messages before anyone parses them', async (ctx) => {
  const conn = await asNode(ctx);
  const ch = await conn.createConfirmChannel();
  const err = new Promise<string>((resolve) => ch.on('error', (e: Error) => resolve(e.message)));
  ch.publish('mesh', 'report', Buffer.from('{}'), { userId: `${ctx.mesh.prefix}node.web2` });
  assert.match(await err, /PRECONDITION_FAILED|406/);
  const ch2 = await conn.createConfirmChannel();
  const err2 = new Promise<string>((resolve) => {
    ch2.on('error', (e: Error) => resolve(e.message));
    conn.on('error', (e: Error) => resolve(e.message));
    conn.on('close', () => resolve('closed'));
  });
  ch2.publish('mesh', 'report', Buffer.alloc(17 << 20, 0x41), {});
  assert.match(await err2, /message size|PRECONDITION_FAILED|406|closed|FRAME/i);
  await conn.close().catch(() => {});
  tally.tried += 2;
  tally.refused += 2;
  say('broker limits', "a message claiming another node's account and one of 17 MiB: both refused by the broker");
});

Live(
  "junk, forgeries and replays on a node's queue: refused and reported; nothing applied; the host keeps going",
  async (ctx) => {
    const files = () => readdirSync(ctx.root).sort();
    const before = files();
    const mesh = ctx.mesh.signer.mesh;
    const evil = (node = 'web1', serial = 50) =>
      bodyText(
        mesh,
        node,
        serial,
        JSON.stringify([
          {
            kind: 'file',
            id: `file:${join(ctx.root, 'evil')}`,
            path: join(ctx.root, 'evil'),
            content: b64('x'),
            mode: '0644',
          },
        ]),
        fresh(),
      );
    const [old] = await ctx.mesh.store
      .admin`select envelope from assignment.declaration where node = 'web1' and serial = 1`;
    const genuine = envelope(evil(), ctx.mesh.signer);
    const env = JSON.parse(genuine.toString());
    env.body = env.body.replace('"serial":50', '"serial":51');
    assert.ok(env.body.includes('"serial":51'));
    const tampered = Buffer.from(JSON.stringify(env));
    const cases: [string, Buffer][] = [
      ['another key', envelope(evil(), { ...ctx.mesh.signer, secret: signingPair().secret })],
      ['the right key over other bytes', tampered],
      ["another node's", envelope(evil('web2'), ctx.mesh.signer)],
      ["another mesh's", envelope(evil().replace(mesh, 'fedcba9876543210'), ctx.mesh.signer)],
      [
        'a deep body',
        envelope(
          '{"mesh":"' +
            mesh +
            '","node":"web1","serial":60,"resources":' +
            '['.repeat(50_000) +
            ']'.repeat(50_000) +
            '}',
          ctx.mesh.signer,
        ),
      ],
      ['9 MiB', Buffer.alloc(9 << 20, 0x20)],
      // Genuine, newer, but its signed expiry passed an hour ago: a withheld or frozen feed.
      [
        'expired before it arrived',
        envelope(
          bodyText(
            mesh,
            'web1',
            70,
            JSON.stringify([
              {
                kind: 'file',
                id: `file:${join(ctx.root, 'evil')}`,
                path: join(ctx.root, 'evil'),
                content: b64('x'),
                mode: '0644',
              },
            ]),
            fresh(60, Date.now() - 3_600_000),
          ),
          ctx.mesh.signer,
        ),
      ],
    ];
    const n = Math.max(5, Math.floor(RUNS / 20));
    for (const u of fc.sample(fc.uint8Array({ maxLength: 300 }), n)) cases.push(['random bytes', Buffer.from(u)]);
    const mark = ctx.proc.output().length;
    const smark = ctx.serve.output().length;
    // Serial 1 is older than the one applied: a replay.
    await cli(ctx.mesh, 'declare', 'web1');
    await ctx.proc.waitFor(/applied declaration 3\b/, 20_000, mark);
    cases.push(['an old one replayed', old!.envelope as Buffer]);
    for (const [, bytes] of cases) await inject(ctx.mesh, 'web1', bytes);
    tally.tried += cases.length;
    await until(
      'every case refused and reported',
      async () => count(ctx.serve.output().slice(smark), /web1 refused a declaration/) >= cases.length,
      60_000,
    ).catch((err) => {
      throw new Error(
        `${err.message}\nhost said:\n${ctx.proc.output().slice(mark)}\nserve said:\n${ctx.serve.output().slice(smark)}`,
      );
    });
    const hostSaid = ctx.proc.output().slice(mark);
    const forged = count(hostSaid, /refused a declaration: forged/);
    const malformed = count(hostSaid, /refused a declaration: malformed/);
    const stale = count(hostSaid, /refused a declaration: stale: serial 70 expired at/);
    const replayed = count(hostSaid, /refused a declaration: replayed: serial 1 /);
    assert.is(forged, 4, hostSaid); // another key, other bytes, another node, another mesh
    assert.is(replayed, 1, hostSaid); // the mesh's own, older: not forged
    assert.is(stale, 1, hostSaid); // expired before it arrived
    assert.is(malformed, cases.length - 6, hostSaid);
    assert.match(ctx.serve.output().slice(smark), /web1 refused a declaration \(serial 70\): stale: /);
    // Each refusal carries its code beside its fault: which forgery, and a stale one as stale (the register's wire codes).
    const coded = (code: string) => count(hostSaid, new RegExp(`refused a declaration: \\w+: .*\\(${code}\\)\\.`));
    assert.equal(['MSHN1', 'MSHN4', 'MSHN5', 'MSHN3', 'MSHN2'].map(coded), [2, 2, 1, 1, 1], hostSaid);
    tally.refused += forged + replayed + malformed + stale;
    assert.equal(files(), before, 'nothing was applied');
    // The host keeps going: a genuine declaration still applies.
    await cli(ctx.mesh, 'declare', 'web1');
    await ctx.proc.waitFor(/applied declaration 4\b/, 20_000, mark);
    tally.survived++;
    say(
      'node queue',
      `${cases.length} hostile declarations: ${forged} refused as forged, ${replayed} as replayed, ${stale} as stale, ${malformed} as malformed, none applied; the next genuine one applied`,
    );
  },
);

Live.after(() => summary('live'));
Live.run();
