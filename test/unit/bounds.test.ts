// P2 without servers: what serve refuses unread (MSHS1), the caps on a
// report's lists (MSHS2), and that an enrolment or rekey answered "again"
// never makes serve compose the fleet: the handlers run against a store that
// only answers and an answer that only counts, and the redeclarer is a counter.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { readReport, REPORT_CAPS } from '../../src/wire/report.js';
import { readPackageChange, PACKAGES_CAP } from '../../src/wire/packages.js';
import { overLimit, INTAKE_LIMITS } from '../../src/serve/intake.js';
import { WireError } from '../../src/wire/envelope.js';
import { writeEnrolRequest } from '../../src/wire/enrol.js';
import { writeRekey } from '../../src/wire/rekey.js';
import { nodeKeys } from '../../src/crypto/keys.js';
import { enrol } from '../../src/serve/handlers/enrol.js';
import { rekey } from '../../src/serve/handlers/rekey.js';
import type { ServeContext } from '../../src/serve/context.js';

const P2 = suite('P2 what one node can make serve hold, keep or compose');

const message = (kind: string, content: Buffer, props: Record<string, unknown> = {}) =>
  ({
    content,
    fields: { routingKey: kind },
    properties: { userId: 'node.hog', headers: {}, ...props },
  }) as unknown as ConsumeMessage;

const refused = (f: () => unknown, code: string) => {
  try {
    f();
  } catch (err) {
    assert.instance(err, WireError);
    assert.is((err as WireError).code, code);
    return;
  }
  assert.unreachable(`expected a refusal with ${code}`);
};

P2("a message over its kind's intake limit is refused unread (MSHS1); one at the limit is read", () => {
  for (const [kind, limit] of Object.entries(INTAKE_LIMITS)) {
    assert.is(overLimit(message(kind, Buffer.alloc(limit))), undefined, `${kind} at its limit`);
    const e = overLimit(message(kind, Buffer.alloc(limit + 1)));
    assert.is(e?.code, 'MSHS1', `${kind} over its limit`);
  }
  // Every limit times the messages serve holds stays far below what a machine has.
  assert.ok(Math.max(...Object.values(INTAKE_LIMITS)) <= 1 << 20);
});

P2('a report whose list is over its cap is refused whole (MSHS2); one at the cap is read', () => {
  const report = (list: string, n: number) => {
    const r: Record<string, unknown> = { v: 1, serial: 1, held: [], failed: [], corrected: [], superseded: [] };
    const one =
      list === 'held'
        ? { id: 'file:/a', kind: 'file', target: '/a', origin: 'declared', digest: 'x' }
        : list === 'failed'
          ? { id: 'file:/a', error: 'e' }
          : list === 'corrected'
            ? 'file:/a'
            : 1;
    r[list] = Array.from({ length: n }, () => one);
    return Buffer.from(JSON.stringify(r));
  };
  for (const [list, cap] of Object.entries(REPORT_CAPS)) {
    readReport(report(list, cap));
    refused(() => readReport(report(list, cap + 1)), 'MSHS2');
  }
});

P2("a report's package change over its cap is refused whole (MSHS2); one at the cap is read", () => {
  const change = (n: number) => ({
    digest: 'a'.repeat(64),
    base: null,
    set: Array.from({ length: n - 1 }, (_, i) => [`p${i}`, 'amd64', '1.0-1', `p${i}`]),
    gone: [['old', 'amd64']],
  });
  assert.is(readPackageChange(change(PACKAGES_CAP)).set.length, PACKAGES_CAP - 1);
  refused(() => readPackageChange(change(PACKAGES_CAP + 1)), 'MSHS2');
});

/** A ServeContext whose store answers each query by its text, and whose redeclarer counts. */
function fakeContext(answers: Record<string, unknown[]>) {
  const queries: string[] = [];
  const sql = ((strings: TemplateStringsArray) => {
    const text = strings.join('?');
    queries.push(text);
    for (const [k, rows] of Object.entries(answers)) if (text.includes(k)) return Promise.resolve(rows);
    return Promise.resolve([]);
  }) as unknown;
  const published: string[] = [];
  const answer = async (queue: string, _b: Buffer, props: { type?: string } = {}) => {
    published.push(`${queue} ${props.type}`);
  };
  const whys: string[] = [];
  const logs: string[] = [];
  const ctx = {
    stores: { inventory: sql, assignment: sql },
    answer,
    accounts: { setPassword: async () => {} },
    signer: { mesh: 'm', public: randomBytes(32), secret: randomBytes(32) },
    prefix: '',
    redeclare: {
      now: async (why: string) => {
        whys.push(why);
        return [];
      },
    },
    log: (line: string) => logs.push(line),
  } as unknown as ServeContext;
  return { ctx, whys, published, queries, logs };
}

P2('an enrolment answered again is answered, and composes nothing', async () => {
  const keys = nodeKeys();
  const body = writeEnrolRequest('hog', 'sekrit', randomBytes(32).toString('base64url'), keys);
  const again = fakeContext({ 'inventory.spend_token': [{ outcome: 'again' }] });
  await enrol(again.ctx, message('enrol', body, { correlationId: 'c' }));
  assert.equal(again.published, ['node.hog enrol-reply'], 'the welcome, again');
  assert.equal(again.whys, [], 'no composition');
  const first = fakeContext({ 'inventory.spend_token': [{ outcome: 'enrolled' }] });
  await enrol(first.ctx, message('enrol', body, { correlationId: 'c' }));
  assert.equal(first.whys, ["hog's enrolment"], 'a first enrolment is declared');
});

P2('a rekey told again is answered, and composes nothing; each rekey is checked against the interval', async () => {
  const keys = nodeKeys();
  const body = writeRekey(
    { node: 'hog', left: randomBytes(32), taken: randomBytes(32), tunnel: 'wg0' },
    keys.identity.secret,
  );
  const props = { replyTo: 'amq.rabbitmq.reply-to.x', correlationId: 'c' };
  const rows = (outcome: string) => ({
    'inventory.identity_of': [{ key: Buffer.from(keys.identity.public) }],
    'inventory.set_overlay_key': [{ outcome }],
  });
  const again = fakeContext(rows('again'));
  await rekey(again.ctx, message('rekey', body, props));
  assert.equal(again.published, ['amq.rabbitmq.reply-to.x rekey-reply']);
  assert.equal(again.whys, [], 'no composition');
  assert.ok(
    again.queries.some((q) => q.includes('inventory.check_answer')),
    'the interval is checked',
  );
  const first = fakeContext(rows('rekeyed'));
  await rekey(first.ctx, message('rekey', body, props));
  assert.equal(first.whys, ["hog's new overlay key"]);
});

P2(
  "a rekey not signed by the node's identity key, or from a node the mesh holds no identity for, is refused as forged (MSHN1); one for another node (MSHN4)",
  async () => {
    const keys = nodeKeys();
    const props = { replyTo: 'amq.rabbitmq.reply-to.x', correlationId: 'c' };
    const body = (signer: Uint8Array) =>
      writeRekey({ node: 'hog', left: randomBytes(32), taken: randomBytes(32), tunnel: 'wg0' }, signer);
    const cases: [string, Buffer | null, Uint8Array, RegExp][] = [
      [
        'signed by another key',
        Buffer.from(keys.identity.public),
        nodeKeys().identity.secret,
        /is not signed by its identity key/,
      ],
      ['no identity held', null, keys.identity.secret, /which the mesh holds no identity for/],
    ];
    for (const [what, held, signer, said] of cases) {
      const f = fakeContext({
        'inventory.identity_of': [{ key: held }],
        'inventory.set_overlay_key': [{ outcome: 'rekeyed' }],
      });
      await rekey(f.ctx, message('rekey', body(signer), props));
      assert.not.ok(
        f.queries.some((q) => q.includes('inventory.set_overlay_key')),
        `${what}: no overlay key is changed`,
      );
      assert.equal(f.whys, [], `${what}: nothing composed`);
      assert.equal(f.published, ['amq.rabbitmq.reply-to.x rekey-reply'], `${what}: the node is told`);
      const line = f.logs.find((l) => l.startsWith('rekey: refused hog: forged: ')) ?? f.logs.join('\n');
      assert.match(line, said);
      assert.match(line, /\(MSHN1\)/);
    }
    // From hog's own account, signed by hog, but speaking for another node: refused before any key is read.
    const f = fakeContext({ 'inventory.identity_of': [{ key: Buffer.from(keys.identity.public) }] });
    const other = writeRekey(
      { node: 'calm', left: randomBytes(32), taken: randomBytes(32), tunnel: 'wg0' },
      keys.identity.secret,
    );
    await rekey(f.ctx, message('rekey', other, props));
    assert.not.ok(f.queries.some((q) => q.includes('inventory.set_overlay_key')));
    assert.match(f.logs.join('\n'), /rekey: refused hog: forged: rekey from hog speaks for calm.*\(MSHN4\)/);
  },
);

P2.run();
