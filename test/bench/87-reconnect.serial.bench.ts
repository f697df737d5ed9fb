// 87. Reconnects after a broker outage. 1,000 hosts (MESH_BENCH_HOSTS) lose
// their broker at the same instant; it is back after 45 s (MESH_BENCH_DOWN_SECONDS).
// Each host retries on mesh-host's own Backoff (src/sys/backoff.ts: the
// class the link uses), on a simulated clock: every attempt before the
// broker is back fails, the first after it gets in. Printed side by side from
// the same run: when they get back in with decorrelated jitter (the default)
// and with the plain doubling (MESH_HOST_BACKOFF_JITTER=none), a row a
// 5-second slice; the figures are the most hosts back within one second (what
// serve's recover answers must keep up with) and how long the fleet took.
// A simulated clock, not a broker: what is measured is the shape of the
// return, which the waits alone decide.
//
// Then the same jittered return against a real `mesh serve`: each host's
// recover is published at its moment (real time, from the first host back),
// and serve's answers are counted as it says them. Printed beside the
// arrivals, a row a second-slice: whether the answers keep up, the most
// recovers waiting at once, and how long after the last arrival the last
// answer came.
import { Backoff, DEFAULT_BACKOFF, seededRandom } from '../../src/sys/backoff.js';
import { freshMesh, type Proc } from '../harness/mesh.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { bench, figure, envInt, insertNodes, createQueues, startServe, impersonator, now, sleep } from './lib.js';

const HOSTS = envInt('MESH_BENCH_HOSTS', 1000);
const DOWN_MS = envInt('MESH_BENCH_DOWN_SECONDS', 45) * 1000;
const SLICE_MS = 5000;

/** When each host is back in, in ms after the loss. */
function returns(jitter: boolean): number[] {
  const rnd = seededRandom(87);
  return Array.from({ length: HOSTS }, () => {
    const b = new Backoff({ ...DEFAULT_BACKOFF, jitter }, rnd);
    // The loss is noticed at once; each wait is followed by an attempt.
    let t = 0;
    for (;;) {
      t += b.next();
      if (t >= DOWN_MS) return t;
    }
  });
}

function perSlice(times: number[], sliceMs: number, end: number): number[] {
  const h = new Array<number>(Math.ceil(end / sliceMs)).fill(0);
  for (const t of times) h[Math.floor(t / sliceMs)]!++;
  return h;
}

const peakPerSecond = (times: number[]) => Math.max(...perSlice(times, 1000, Math.max(...times) + 1));

/** Replay the return against a real serve: each host's recover at its moment; when serve answered each, ms after the first. */
async function answered(times: number[]): Promise<{ arrivals: number[]; answers: number[] }> {
  const mesh = await freshMesh();
  let serve: Proc | undefined;
  try {
    const names = await insertNodes(mesh, times.length);
    await createQueues(mesh, names);
    serve = await startServe(mesh);
    const imp = await impersonator(mesh);
    const pub = await imp.createConfirmChannel();
    const first = Math.min(...times);
    const order = times.map((t, i) => ({ at: t - first, name: names[i]! })).sort((a, b) => a.at - b.at);
    const answers: number[] = [];
    const said = /recover: handed (b\d{6}) /g;
    let read = serve.output().length;
    const t0 = now();
    // Serve's answers, as it says them, every 100 ms.
    const watch = setInterval(() => {
      const out = serve!.output();
      said.lastIndex = read;
      const t = now() - t0;
      for (let m = said.exec(out); m; m = said.exec(out)) answers.push(t);
      read = out.length;
    }, 100);
    try {
      for (const h of order) {
        const wait = h.at - (now() - t0);
        if (wait > 0) await sleep(wait);
        pub.publish(EXCHANGE, 'recover', Buffer.from('{}'), { userId: `${mesh.prefix}node.${h.name}` });
      }
      await pub.waitForConfirms();
      const deadline = now() + 120_000;
      while (answers.length < order.length && now() < deadline) await sleep(200);
    } finally {
      clearInterval(watch);
      await imp.close().catch(() => {});
    }
    if (answers.length < order.length) throw new Error(`serve answered ${answers.length} of ${order.length} recovers`);
    return { arrivals: order.map((h) => h.at), answers };
  } finally {
    await serve?.stop();
    await mesh.stop();
  }
}

await bench('87 reconnect spread', async (figs) => {
  const jittered = returns(true);
  const plain = returns(false);
  const end = Math.max(...jittered, ...plain) + 1;
  const a = perSlice(jittered, SLICE_MS, end);
  const b = perSlice(plain, SLICE_MS, end);
  const bar = (n: number) => '#'.repeat(Math.ceil((n / HOSTS) * 60));
  const rows = a
    .map((n, i) => ({ i, n, m: b[i]! }))
    .filter((r) => r.n || r.m)
    .map(
      (r) =>
        `${String(r.i * 5).padStart(4)}-${String(r.i * 5 + 5).padEnd(4)}s  ${String(r.n).padStart(5)} ${bar(r.n).padEnd(62)}${String(r.m).padStart(5)} ${bar(r.m)}`,
    );
  console.log(
    `\n${HOSTS} hosts lose the broker at 0 s; it is back at ${DOWN_MS / 1000} s. Hosts back in, a row a ${SLICE_MS / 1000} s slice:\n` +
      `   slice   decorrelated jitter${' '.repeat(48)}no jitter\n${rows.join('\n')}\n`,
  );
  // The jittered return against a real serve: arrivals and answers a second each, from the same run.
  const { arrivals, answers } = await answered(jittered);
  const last = Math.max(...arrivals, ...answers) + 1;
  const inA = perSlice(arrivals, 1000, last);
  const outA = perSlice(answers, 1000, last);
  let waiting = 0;
  let mostWaiting = 0;
  const lines: string[] = [];
  for (let i = 0; i < inA.length; i++) {
    waiting += inA[i]! - outA[i]!;
    mostWaiting = Math.max(mostWaiting, waiting);
    if (inA[i] || outA[i])
      lines.push(
        `${String(i).padStart(4)}s  ${String(inA[i]).padStart(5)}  ${String(outA[i]).padStart(7)}  ${String(waiting).padStart(7)}`,
      );
  }
  console.log(
    `\nThe jittered return replayed against a real mesh serve: recovers arriving and answered, a row a second from the first host back:\n` +
      `  second  arrived  answered  waiting\n${lines.join('\n')}\n`,
  );
  figs.push(
    figure({
      id: '87-recover-answers',
      what: 'most recover answers serve gave within one second, the jittered return',
      value: Math.max(...outA),
      unit: 'answers',
      limit: { what: 'most recovers arriving within one second', value: Math.max(...inA), unit: 'recovers' },
    }),
    figure({
      id: '87-recover-waiting',
      what: 'most recovers waiting for their answer at once',
      value: mostWaiting,
      unit: 'recovers',
      limit: { what: 'hosts', value: HOSTS, unit: 'hosts' },
    }),
    figure({
      id: '87-recover-after',
      what: 'the last answer after the last arrival',
      value: (Math.max(...answers) - Math.max(...arrivals)) / 1000,
      unit: 's',
      limit: { what: 'the return, first host to last', value: Math.max(...arrivals) / 1000, unit: 's' },
    }),
    figure({
      id: '87-peak-jitter',
      what: 'most hosts back within one second, decorrelated jitter',
      value: peakPerSecond(jittered),
      unit: 'hosts',
      limit: { what: 'the same, no jitter', value: peakPerSecond(plain), unit: 'hosts' },
    }),
    figure({
      id: '87-last-jitter',
      what: 'the last host back, decorrelated jitter',
      value: Math.max(...jittered) / 1000,
      unit: 's',
      limit: { what: 'the same, no jitter', value: Math.max(...plain) / 1000, unit: 's' },
    }),
  );
});
