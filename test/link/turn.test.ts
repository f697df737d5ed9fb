// The order a link tries its brokers (L1): in turn, each failed
// attempt moving to the next and round again, and starting where the node's
// name says, so a fleet starting at once spreads over a cluster's nodes
// instead of every host dialling the first. Against real sockets that close
// at once (a broker node down), the list read at each attempt.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { Link, startOf } from '../../host/link/link.js';
import { fakeBroker, type FakeBroker } from './fake_broker.js';
import type { Identity, BrokerAddress } from '../../host/identity.js';

const T = suite<{ fakes: FakeBroker[] }>('the link tries its brokers in turn');
T.before(async (ctx) => {
  ctx.fakes = await Promise.all([0, 1, 2].map(() => fakeBroker(() => 'refuse')));
});
T.after(async (ctx) => {
  await Promise.all((ctx.fakes ?? []).map((f) => f.close()));
});

const FP = 'AA:'.repeat(31) + 'AA';
const NAMES = Array.from({ length: 64 }, (_, i) => `web${i}`);
const key = () => randomBytes(32).toString('base64');
const identity = (name: string, brokers: BrokerAddress[]): Identity => ({
  v: 1,
  name,
  mesh: '0123456789abcdef',
  signingKey: key(),
  broker: { ...brokers[0]!, vhost: 'v', user: `node.${name}` },
  brokers,
  password: 'p',
  keys: { identity: key(), overlay: key(), sealing: key() },
});

/** The ports of the first N attempts of a link over LIST. */
async function attempts(name: string, list: () => BrokerAddress[], n: number): Promise<number[]> {
  const ports: number[] = [];
  let link: Link;
  const done = new Promise<void>((resolve) => {
    link = new Link(
      identity(name, list()),
      { minMs: 10, maxMs: 20, resetAfterMs: 30_000, jitter: false },
      {
        connected: async () => {},
        lost: () => {},
        log: (l) => {
          const m = /cannot reach the broker at 127\.0\.0\.1:(\d+)/.exec(l);
          if (m) ports.push(Number(m[1]));
          if (ports.length >= n) {
            link.stop();
            resolve();
          }
        },
      },
      list,
    );
  });
  await link!.run();
  await done;
  return ports.slice(0, n);
}

T('a failed attempt moves to the next broker, round and round, from where the name starts', async ({ fakes }) => {
  const list = fakes.map((f) => ({ host: '127.0.0.1', port: f.port, fingerprint: FP }));
  // Two names that start at different places: each goes round from its own.
  const a = NAMES.find((x) => startOf(x, 3) === 0)!;
  const b = NAMES.find((x) => startOf(x, 3) === 2)!;
  assert.ok(a && b, 'names starting at 0 and at 2');
  assert.equal(
    await attempts(a, () => list, 5),
    [0, 1, 2, 0, 1].map((i) => list[i]!.port),
  );
  assert.equal(
    await attempts(b, () => list, 4),
    [2, 0, 1, 2].map((i) => list[i]!.port),
  );
});

T('a fleet spreads: a thousand names start at each of three brokers about a third of the time', () => {
  const counts = [0, 0, 0];
  for (let i = 0; i < 1000; i++) counts[startOf(`node-${i}`, 3)]!++;
  assert.ok(
    counts.every((c) => c > 280 && c < 390),
    counts.join(', '),
  );
});

T('the list is read at each attempt: one that changed counts from the next attempt', async ({ fakes }) => {
  const all = fakes.map((f) => ({ host: '127.0.0.1', port: f.port, fingerprint: FP }));
  let list = [all[0]!];
  let n = 0;
  const ports = await attempts(
    'web1',
    () => {
      if (++n > 2) list = all.slice(1);
      return list;
    },
    3,
  );
  assert.is(ports[0], all[0]!.port);
  assert.ok(
    ports.slice(1).every((p) => p !== all[0]!.port),
    `after the change only the new list is dialled: ${ports.join(', ')}`,
  );
});

T('a rouse (L3) tries the same broker again at once: it was not that broker that failed', async () => {
  const hang = await Promise.all([0, 1, 2].map(() => fakeBroker(() => 'hang')));
  let link: Link | undefined;
  try {
    const list = hang.map((f) => ({ host: '127.0.0.1', port: f.port, fingerprint: FP }));
    const name = NAMES.find((x) => startOf(x, 3) === 1)!;
    link = new Link(
      identity(name, list),
      { minMs: 10, maxMs: 20, resetAfterMs: 30_000, jitter: false },
      { connected: async () => {}, lost: () => {}, log: () => {} },
      () => list,
    );
    const running = link!.run();
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(ok(), what);
    };
    await until('the first attempt reached broker 1', () => hang[1]!.accepted() === 1);
    link!.rouse();
    await until('a second attempt', () => hang.reduce((n, f) => n + f.accepted(), 0) === 2);
    assert.equal(
      hang.map((f) => f.accepted()),
      [0, 2, 0],
    );
    link!.stop();
    await running;
  } finally {
    link?.stop();
    await Promise.all(hang.map((f) => f.close()));
  }
});

T.run();
