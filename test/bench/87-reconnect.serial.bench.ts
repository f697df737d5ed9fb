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
import { Backoff, DEFAULT_BACKOFF, seededRandom } from '../../src/sys/backoff.js';
import { bench, figure, envInt } from './lib.js';

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
  figs.push(
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
