// One host's own cost of a declaration that changes two files, alone in a
// process: verify, digest, take (keep, mark, apply: host/keep.ts) and write the
// report, as the agent's drain does, N times over two files whose bytes change
// every time. Prints one JSON line: CPU per declaration (user and system, this
// process and its children still running: the state lock's helper,
// host/apply/lock.ts) and the fsyncs per declaration,
// counted at the one place a node's files are forced to disk (src/sys/atomic.ts).
// Then the same work bare, as its floor: the Ed25519 verify of each body, the
// kept declaration and a state record of the same size each written to a temp,
// fsynced and renamed, the directory fsynced, the two files written to temps
// and renamed over their paths, each step one direct call.
// Run by bench 4 (test/bench/4-propagation); on its own:
//   node dist/test/bench/host_cost.js [N] [no-bare]
// (no-bare: mesh's own loop alone, for strace to count its fsyncs)
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdtempSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { signText } from '../../src/wire/envelope.js';
import { signingPublic, verify } from '../../src/crypto/sign.js';
import { readDeclaration, bodyText } from '../../src/wire/declaration.js';
import { writeReport } from '../../src/wire/report.js';
import { diskSteps } from '../../src/sys/atomic.js';
import { takeDeclaration } from '../../host/keep.js';
import { declarationDigest } from '../../host/serial.js';

const N = Number(process.argv[2] ?? 200);
const BARE = process.argv[3] !== 'no-bare';
const secret = randomBytes(32);
const pub = signingPublic(secret);
const mesh = randomBytes(8).toString('hex');
const base = mkdtempSync(join(tmpdir(), 'mesh-host-cost-'));
const root = join(base, 'root');
const dir = join(base, 'state');
mkdirSync(join(root, 'n1'), { recursive: true });
mkdirSync(dir, { mode: 0o700 });

// The two files of bench 4's fleet (lib.ts perNodeFiles), their first line changed each time.
const envs = Array.from({ length: N + 1 }, (_, i) => {
  const files = [
    ['node.conf', `node n1 ${i}\n` + 'listen 10.0.0.1:443\n'.repeat(12)],
    ['motd', `welcome to n1 ${i}\n` + 'welcome to n1\n'.repeat(19)],
  ].map(([f, c]) => {
    const path = join(root, 'n1', f!);
    return { id: `file:${path}`, kind: 'file', path, mode: '0644', content: Buffer.from(c!).toString('base64') };
  });
  return signText(bodyText(mesh, 'n1', i + 1, JSON.stringify(files), { signed: 1, expires: 4_000_000_000 }), secret);
});

/** CPU ms of the running children of this process (utime + stime from /proc), by pid. */
function children(): Map<number, number> {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  const out = new Map<number, number>();
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const s = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === process.pid) out.set(Number(p), (Number(f[11]) + Number(f[12])) * tick);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

let fsyncs = 0;
diskSteps.note = (s) => {
  if (s.op === 'fsync' || s.op === 'fsyncdir') fsyncs++;
};

async function one(bytes: Buffer): Promise<void> {
  const decl = readDeclaration(bytes, pub, { mesh, node: 'n1' });
  const r = await takeDeclaration(dir, bytes, decl, declarationDigest(bytes), {
    stateDir: dir,
    roots: [root],
    openSealed: () => {
      throw new Error('no secrets here');
    },
    overlayKeyPath: join(dir, 'overlay.key'),
    wgDir: join(base, 'wg'),
    firewall: false,
  });
  if (r.failed.length || r.changed.length !== 2)
    throw new Error(`the apply did not change two files: ${JSON.stringify(r)}`);
  writeReport({ v: 1, serial: decl.serial, held: r.held, failed: [], corrected: [], superseded: [] });
}

/** The floor: the same verify and writes, bare, on the same envelopes. */
function bare(): { cpuMs: number; userMs: number; systemMs: number } {
  const rawDir = join(base, 'bare');
  mkdirSync(join(rawDir, 'files'), { recursive: true });
  const record = readFileSync(join(dir, 'applied.json'));
  const work = envs.map((bytes) => {
    const env = JSON.parse(bytes.toString()) as { body: string; sig: string };
    const files = (JSON.parse(env.body) as { resources: { content: string }[] }).resources.map((f) =>
      Buffer.from(f.content, 'base64'),
    );
    return { bytes, body: Buffer.from(env.body), sig: Buffer.from(env.sig, 'base64'), files };
  });
  const put = (path: string, bytes: Uint8Array, sync: boolean) => {
    const fd = openSync(`${path}.tmp`, 'wx', 0o600);
    fchmodSync(fd, 0o644);
    writeSync(fd, bytes);
    if (sync) fsyncSync(fd);
    closeSync(fd);
  };
  const step = (w: (typeof work)[number]) => {
    if (!verify(w.sig, w.body, pub)) throw new Error('the bare verify failed');
    put(join(rawDir, 'declaration.signed'), w.bytes, true);
    put(join(rawDir, 'applied.json'), record, true);
    renameSync(join(rawDir, 'declaration.signed.tmp'), join(rawDir, 'declaration.signed'));
    renameSync(join(rawDir, 'applied.json.tmp'), join(rawDir, 'applied.json'));
    const d = openSync(rawDir, 'r');
    fsyncSync(d);
    closeSync(d);
    w.files.forEach((f, i) => put(join(rawDir, 'files', String(i)), f, false));
    w.files.forEach((_, i) => renameSync(join(rawDir, 'files', `${i}.tmp`), join(rawDir, 'files', String(i))));
  };
  step(work[0]!);
  const c0 = process.resourceUsage();
  for (let i = 1; i <= N; i++) step(work[i]!);
  const c1 = process.resourceUsage();
  const ms = (a: number, b: number) => (b - a) / 1000 / N;
  return {
    cpuMs: ms(c0.userCPUTime + c0.systemCPUTime, c1.userCPUTime + c1.systemCPUTime),
    userMs: ms(c0.userCPUTime, c1.userCPUTime),
    systemMs: ms(c0.systemCPUTime, c1.systemCPUTime),
  };
}

try {
  await one(envs[0]!); // the files exist before the clock starts: every measured apply changes both
  fsyncs = 0;
  const k0 = children();
  const c0 = process.resourceUsage();
  const t0 = performance.now();
  for (let i = 1; i <= N; i++) await one(envs[i]!);
  const wall = performance.now() - t0;
  const c1 = process.resourceUsage();
  const k1 = children();
  const helpersMs = [...k1].reduce((a, [pid, ms]) => a + ms - (k0.get(pid) ?? 0), 0) / N;
  const ms = (a: number, b: number) => (b - a) / 1000 / N;
  console.log(
    JSON.stringify({
      declarations: N,
      cpuMs: ms(c0.userCPUTime + c0.systemCPUTime, c1.userCPUTime + c1.systemCPUTime) + helpersMs,
      helpersMs,
      userMs: ms(c0.userCPUTime, c1.userCPUTime),
      systemMs: ms(c0.systemCPUTime, c1.systemCPUTime),
      wallMs: wall / N,
      fsyncs: fsyncs / N,
      bare: BARE ? bare() : undefined,
    }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
