// 8.5 The node queue's type on a broker cluster. On a three-node
// cluster of its own: make N node queues of each type (classic as today, and
// quorum), publish the same envelopes to them with confirms over the drain's
// confirm channels, and time it; then kill the node the classic queues live
// on and see what a host reconnecting through another node gets from each.
// The numbers are in docs/benchmarks.md (bench 8.5), the choice in docs/design.md ("What the broker keeps").
import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { startCluster, type RabbitCluster } from '../harness/rabbit_cluster.js';
import { startRabbit } from '../harness/rabbitmq.js';
import { NODE_QUEUE_KEEPS } from '../../src/broker/accounts.js';
import { PUBLISH_CHANNELS } from '../../src/serve/drain.js';
import { LIMITS } from '../../src/wire/envelope.js';
import { bench, figure, now, envInt, tempDir, removeDir } from './lib.js';

const NODES = envInt('MESH_BENCH_QUEUE_NODES', 500);
const MESSAGES = envInt('MESH_BENCH_QUEUE_MESSAGES', 10_000);
// A declaration of bench 3's fleet is about 2.7 KB signed.
const SIZE = envInt('MESH_BENCH_QUEUE_BYTES', 2700);
const VHOST = 'mesh';

type Kind = 'classic' | 'quorum';

const url = (c: RabbitCluster, i: number) => ({
  protocol: 'amqp',
  hostname: '127.0.0.1',
  port: c.nodes[i]!.amqpPort,
  username: c.admin.user,
  password: c.admin.password,
  vhost: VHOST,
});

async function makeQueues(c: RabbitCluster, kind: Kind): Promise<{ names: string[]; seconds: number }> {
  const conn = await amqp.connect(url(c, 0));
  const ch = await conn.createChannel();
  const names = Array.from({ length: NODES }, (_, i) => `mesh.node.${kind}-${i}`);
  const t0 = now();
  for (const n of names)
    await ch.assertQueue(n, { durable: true, arguments: kind === 'quorum' ? { 'x-queue-type': 'quorum' } : {} });
  const seconds = (now() - t0) / 1000;
  await conn.close();
  return { names, seconds };
}

/** Publish+confirm of MESSAGES envelopes round-robin over the queues, through node `via`. */
async function publishRate(
  c: RabbitCluster,
  via: number,
  names: string[],
  persistent: boolean,
): Promise<{ rate: number; failed: number }> {
  const conn = await amqp.connect(url(c, via));
  const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
  const body = randomBytes(SIZE / 2).toString('hex');
  let failed = 0;
  const t0 = now();
  await Promise.all(
    Array.from(
      { length: MESSAGES },
      (_, i) =>
        new Promise<void>((res) => {
          chs[i % chs.length]!.publish(
            '',
            names[i % names.length]!,
            Buffer.from(body),
            { persistent, mandatory: true },
            (err) => {
              if (err) failed++;
              res();
            },
          );
        }),
    ),
  );
  const rate = MESSAGES / ((now() - t0) / 1000);
  await conn.close();
  return { rate, failed };
}

/** What a host reconnecting through node `via` gets from queue `name` whose home may be dead. */
async function consumeVia(c: RabbitCluster, via: number, name: string): Promise<string> {
  const conn = await amqp.connect(url(c, via));
  conn.on('error', () => {});
  try {
    const ch = await conn.createChannel();
    ch.on('error', () => {});
    const got = await new Promise<string>((resolve) => {
      ch.once('close', () => resolve('channel closed'));
      ch.consume(
        name,
        (m) => {
          if (m) resolve(`consumed a message of ${m.content.length} bytes`);
        },
        { noAck: true },
      ).then(
        () => setTimeout(() => resolve('consuming, nothing arrived in 2 s'), 2000),
        (err) => resolve(`refused: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 160)}`),
      );
    });
    return got;
  } finally {
    await conn.close().catch(() => {});
  }
}

/** A mandatory publish with confirm to one queue: confirmed, returned (unroutable), or nacked. */
async function publishOne(c: RabbitCluster, via: number, name: string): Promise<string> {
  const conn = await amqp.connect(url(c, via));
  const ch = await conn.createConfirmChannel();
  let returned = false;
  ch.on('return', () => {
    returned = true;
  });
  const said = await new Promise<string>((res) =>
    ch.publish('', name, Buffer.from('x'), { mandatory: true }, (err) =>
      res(err ? 'nacked' : returned ? 'returned (no queue took it)' : 'confirmed'),
    ),
  );
  await conn.close();
  return said;
}

await bench('8.5 node queues on a broker cluster', async (figs) => {
  const dir = tempDir('queues-cluster');
  const c = await startCluster(dir);
  try {
    // The carry policy of serve (src/broker/accounts.ts), both types.
    await c.api.putPolicy(VHOST, 'mesh-node-queues', {
      pattern: '^mesh\\.node\\.',
      'apply-to': 'queues',
      priority: 0,
      definition: { 'max-length': NODE_QUEUE_KEEPS, 'max-length-bytes': 2 * LIMITS.declaration, overflow: 'drop-head' },
    });
    const classic = await makeQueues(c, 'classic');
    const quorum = await makeQueues(c, 'quorum');
    figs.push(
      figure({
        id: 'queues.create',
        what: `quorum node queues made/s (${NODES}, three members each)`,
        value: NODES / quorum.seconds,
        unit: '/s',
        limit: { what: 'classic node queues made/s, same run', value: NODES / classic.seconds, unit: '/s' },
      }),
    );
    // Each twice, in turns, the better kept: the first round fills queues that never held a message.
    const best = async (f: () => Promise<{ rate: number; failed: number }>) => {
      const a = await f();
      const b = await f();
      return a.rate > b.rate ? a : b;
    };
    const [cT, q] = [
      await best(() => publishRate(c, 0, classic.names, false)),
      await best(() => publishRate(c, 0, quorum.names, false)),
    ];
    const cP = await best(() => publishRate(c, 0, classic.names, true));
    const qElse = await best(() => publishRate(c, 1, quorum.names, false));
    // The policy holds a quorum queue to its newest NODE_QUEUE_KEEPS too.
    const kept = await (async () => {
      const conn = await amqp.connect(url(c, 0));
      try {
        return (await (await conn.createChannel()).checkQueue(quorum.names[0]!)).messageCount;
      } finally {
        await conn.close();
      }
    })();
    figs.push(
      figure({
        id: 'queues.quorum',
        what: `publish+confirm to quorum node queues, ${SIZE} B envelopes, 3 nodes up`,
        value: q.rate,
        unit: '/s',
        limit: { what: 'the same to classic queues, not persistent', value: cT.rate, unit: '/s' },
        bound: `classic persistent: ${cP.rate.toFixed(0)}/s; quorum through another node than node 1: ${qElse.rate.toFixed(0)}/s; nacked: classic ${cT.failed}, quorum ${q.failed}; a quorum queue sent ${Math.ceil(MESSAGES / NODES) * 2} holds ${kept} (policy max-length ${NODE_QUEUE_KEEPS}, drop-head)`,
      }),
    );
    // The classic queues live on node 1 (declared through it, client-local). Kill it.
    await publishOne(c, 0, classic.names[0]!);
    await publishOne(c, 0, quorum.names[0]!);
    await c.kill(0);
    const classicPublish = await publishOne(c, 1, classic.names[0]!);
    const classicConsume = await consumeVia(c, 1, classic.names[0]!);
    const quorumPublish = await publishOne(c, 1, quorum.names[0]!);
    const quorumConsume = await consumeVia(c, 1, quorum.names[0]!);
    const qDead = await publishRate(c, 1, quorum.names, false);
    figs.push(
      figure({
        id: 'queues.quorum.dead',
        what: 'publish+confirm to quorum node queues with one of 3 nodes dead',
        value: qDead.rate,
        unit: '/s',
        limit: { what: 'the same with 3 nodes up', value: qElse.rate, unit: '/s' },
        detail: { classicPublish, classicConsume, quorumPublish, quorumConsume },
        bound: `a classic queue whose node died, through another node: publish ${classicPublish}, consume ${classicConsume}; a quorum queue: publish ${quorumPublish}, consume ${quorumConsume}`,
      }),
    );
  } finally {
    await c.stop();
  }
  // One broker node alone (the first node before a cluster): the same two types, the same envelopes.
  const one = await startRabbit(`${dir}/alone`);
  try {
    const alone = { nodes: [one], admin: one.admin } as unknown as RabbitCluster;
    const classic = await makeQueues(alone, 'classic');
    const quorum = await makeQueues(alone, 'quorum');
    const best = async (f: () => Promise<{ rate: number; failed: number }>) => {
      const a = await f();
      const b = await f();
      return a.rate > b.rate ? a : b;
    };
    const cT = await best(() => publishRate(alone, 0, classic.names, false));
    const q = await best(() => publishRate(alone, 0, quorum.names, false));
    figs.push(
      figure({
        id: 'queues.alone',
        what: 'publish+confirm to quorum node queues, one broker node alone',
        value: q.rate,
        unit: '/s',
        limit: { what: 'the same to classic queues, not persistent', value: cT.rate, unit: '/s' },
        bound: `queues made/s alone: quorum ${(NODES / quorum.seconds).toFixed(0)}, classic ${(NODES / classic.seconds).toFixed(0)}`,
      }),
    );
  } finally {
    await one.stop();
    removeDir(dir);
  }
});
