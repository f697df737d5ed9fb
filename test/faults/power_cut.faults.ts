// D7: a host's power cut between any two steps of taking a declaration, for a
// declaration that changes two files and for one that adds a file and drops
// another. The real agent takes the declaration while every step that changes
// the disk is noted (src/sys/atomic.ts diskSteps); then, for every point
// between two steps, every disk a power cut there may leave is made and a new
// agent started on it, as the host's next boot would.
//
// What a power cut may leave, by POSIX: a rename or unlink is kept for certain
// only once its directory was fsynced after it, and otherwise may or may not
// be (each subset is tried); a file renamed into place holds its bytes only if
// its temp was fsynced before the cut, and is found empty otherwise. A process
// killed at that point is the case where every step taken is kept.
//
// What must hold on each: the next start is not stopped by a torn record
// (applied.json, the kept declaration), the mark never goes below the serial
// taken before, no declared file is left on the disk that no record names, and
// once the agent acknowledged and reported (after its last step), the next
// start holds the new declaration, files and all, from its own disk.
//
// It cannot see what the kernel or the disk does below fsync (a drive that
// acknowledges a flush it did not make), nor a write that bypasses atomic.ts.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { diskSteps, type DiskStep } from '../../src/sys/atomic.js';
import { signText } from '../../src/wire/envelope.js';
import { signingPublic } from '../../src/crypto/sign.js';
import { bodyText } from '../../src/wire/declaration.js';
import { readDeclaration } from '../../src/wire/declaration.js';
import { Agent } from '../../host/agent.js';
import { takeDeclaration } from '../../host/keep.js';
import { declarationDigest, readMark } from '../../host/serial.js';
import { readRecord } from '../../host/apply/state.js';
import { hostConfig, driverSettings } from '../../host/config.js';
import type { Identity } from '../../host/identity.js';
import { tally, say, summary } from './tally.js';

const Cut = suite('power cut between any two steps of taking a declaration (D7)');

const secret = randomBytes(32);
const mesh = randomBytes(8).toString('hex');
const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');

interface Disk {
  files: Map<string, { bytes: Buffer; mode: number }>;
  dirs: Map<string, number>;
}

function identity(): Identity {
  const broker = { host: '127.0.0.1', port: 5671, vhost: 'v', user: 'u', fingerprint: 'f' };
  return {
    v: 1,
    name: 'n1',
    mesh,
    signingKey: b64(signingPublic(secret)),
    broker,
    brokers: [{ host: broker.host, port: broker.port, fingerprint: broker.fingerprint }],
    password: 'p',
    keys: { identity: b64(randomBytes(32)), overlay: b64(randomBytes(32)), sealing: b64(randomBytes(32)) },
  };
}

function declaration(serial: number, files: Record<string, string>, root: string): Buffer {
  const resources = Object.entries(files).map(([name, content]) => {
    const path = join(root, 'etc', name);
    return { id: `file:${path}`, kind: 'file', path, mode: '0644', content: b64(content) };
  });
  return signText(
    bodyText(mesh, 'n1', serial, JSON.stringify(resources), { signed: 1, expires: 4_000_000_000 }),
    secret,
  );
}

function snapshot(base: string): Disk {
  const d: Disk = { files: new Map(), dirs: new Map() };
  const walk = (p: string) => {
    for (const name of readdirSync(p)) {
      const f = join(p, name);
      const st = statSync(f);
      if (st.isDirectory()) {
        d.dirs.set(f, st.mode & 0o7777);
        walk(f);
      } else d.files.set(f, { bytes: readFileSync(f), mode: st.mode & 0o7777 });
    }
  };
  walk(base);
  return d;
}

function restore(base: string, d: Disk): void {
  rmSync(base, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  for (const [p, mode] of [...d.dirs].sort(([a], [b]) => a.length - b.length)) {
    mkdirSync(p, { recursive: true });
    chmodSync(p, mode);
  }
  for (const [p, f] of d.files) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, f.bytes);
    chmodSync(p, f.mode);
  }
}

/**
 * Every disk a power cut after the first `k` steps may leave: renames and
 * unlinks not yet made durable by an fsync of their directory each kept or
 * lost, a file renamed from a temp not yet fsynced found empty.
 */
function disksAfter(before: Disk, steps: DiskStep[], k: number): Disk[] {
  const temps = new Map<string, { bytes: Buffer; mode: number; synced: boolean }>();
  const moves: { step: DiskStep & { op: 'rename' | 'unlink' }; dir: string; durable: boolean }[] = [];
  for (const s of steps.slice(0, k)) {
    if (s.op === 'write') temps.set(s.tmp, { bytes: s.bytes, mode: s.mode, synced: false });
    else if (s.op === 'fsync') temps.get(s.tmp)!.synced = true;
    else if (s.op === 'rename' || s.op === 'unlink') moves.push({ step: s, dir: dirname(s.path), durable: false });
    else if (s.op === 'fsyncdir') for (const m of moves) if (m.dir === s.dir) m.durable = true;
  }
  const open = moves.filter((m) => !m.durable);
  const out: Disk[] = [];
  for (let subset = 0; subset < 1 << open.length; subset++) {
    const files = new Map(before.files);
    for (const m of moves) {
      const i = open.indexOf(m);
      if (i >= 0 && !(subset & (1 << i))) continue; // lost in the cut
      if (m.step.op === 'unlink') files.delete(m.step.path);
      else {
        const t = temps.get(m.step.tmp)!;
        files.set(m.step.path, { bytes: t.synced ? t.bytes : Buffer.alloc(0), mode: t.mode });
      }
    }
    out.push({ files, dirs: before.dirs });
  }
  return out;
}

const said = (log: string[], re: RegExp) => log.some((l) => re.test(l));

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An agent on BASE, started as at boot: it reads back its state and reconciles against what it kept. */
async function boot(base: string, id: Identity): Promise<{ agent: Agent; log: string[]; threw?: Error }> {
  const log: string[] = [];
  const config = hostConfig({
    MESH_HOST_DIR: join(base, 'state'),
    MESH_HOST_ROOTS: join(base, 'root'),
    MESH_HOST_FIREWALL: 'off',
    MESH_HOST_RECONCILE_SECONDS: '3600',
  });
  const agent = new Agent(id, config, (l) => log.push(l));
  try {
    await agent.start();
    await agent.stopped();
  } catch (err) {
    return { agent, log, threw: err as Error };
  } finally {
    agent.stop();
  }
  return { agent, log };
}

async function cutEverywhere(label: string, first: Record<string, string>, next: Record<string, string>) {
  const base = mkdtempSync(join(tmpdir(), 'mesh-power-cut-'));
  const root = join(base, 'root');
  const state = join(base, 'state');
  mkdirSync(join(root, 'etc'), { recursive: true });
  mkdirSync(state, { mode: 0o700 });
  const id = identity();
  const pub = signingPublic(secret);
  try {
    // Serial 2 taken and applied as the agent takes one; then the agent up, as it runs.
    const two = declaration(2, first, root);
    await takeDeclaration(state, two, readDeclaration(two, pub, { mesh, node: 'n1' }), declarationDigest(two), {
      stateDir: state,
      roots: [root],
      openSealed: () => Buffer.alloc(0),
      overlayKeyPath: join(state, 'overlay.key'),
      ...driverSettings(hostConfig()),
    });
    const before = snapshot(base);
    const three = declaration(3, next, root);
    const log: string[] = [];
    const agent = new Agent(
      id,
      hostConfig({
        MESH_HOST_DIR: state,
        MESH_HOST_ROOTS: root,
        MESH_HOST_FIREWALL: 'off',
        MESH_HOST_RECONCILE_SECONDS: '3600',
      }),
      (l) => log.push(l),
    );
    const steps: DiskStep[] = [];
    try {
      await agent.start();
      await agent.stopped();
      diskSteps.note = (s) => steps.push(s);
      agent.receive({ content: three, properties: { type: 'declaration' }, fields: {} } as unknown as ConsumeMessage);
      await until('the agent to apply declaration 3', () => said(log, /applied declaration 3\b/), 20_000);
      await agent.stopped();
    } finally {
      diskSteps.note = undefined;
      agent.stop();
    }
    assert.ok(
      steps.length > 0 && said(log, /applied declaration 3: 2 changed/),
      `declaration 3 changed two files: ${log.join(' | ')}`,
    );
    const want = new Map(Object.entries(next).map(([n, c]) => [join(root, 'etc', n), c]));
    let disks = 0;
    const seen = new Set<string>();
    for (let k = 0; k <= steps.length; k++) {
      const acked = k === steps.length; // the agent acks and reports only after its last step
      for (const d of disksAfter(before, steps, k)) {
        const key = [...d.files].map(([p, f]) => `${p}:${f.bytes.toString('base64')}`).join('|') + acked;
        if (seen.has(key)) continue;
        seen.add(key);
        disks++;
        restore(base, d);
        const at = `${label}: cut after step ${k} of ${steps.length} (${k ? steps[k - 1]!.op : 'none'})`;
        const b = await boot(base, id);
        const all = b.log.join(' | ');
        assert.not.ok(b.threw, `${at}: the next start threw: ${b.threw?.message}`);
        assert.not.ok(said(b.log, /apply failed/), `${at}: the next start could not reconcile: ${all}`);
        assert.not.ok(
          said(b.log, /refusing the kept declaration: (malformed|forged)/),
          `${at}: the kept declaration was found torn: ${all}`,
        );
        const mark = readMark(state);
        assert.ok(mark.serial >= 2, `${at}: the mark went down to ${mark.serial}`);
        const held = new Set(readRecord(state).held.map((h) => h.target));
        const onDisk = readdirSync(join(root, 'etc')).filter((f) => !f.startsWith('.'));
        for (const f of onDisk)
          assert.ok(held.has(join(root, 'etc', f)), `${at}: ${f} is on the disk and no record names it`);
        if (acked) {
          assert.is(mark.serial, 3, `${at}: acknowledged, yet the mark is ${mark.serial}`);
          assert.not.ok(said(b.log, /refusing the kept declaration/), `${at}: acknowledged, yet: ${all}`);
          assert.equal(onDisk.sort(), [...want.keys()].map((p) => p.slice(join(root, 'etc').length + 1)).sort());
          for (const [p, c] of want)
            assert.is(readFileSync(p, 'utf8'), c, `${at}: acknowledged, yet ${p} does not hold declaration 3`);
        }
      }
    }
    tally.tried += disks;
    tally.survived += disks;
    say(`power cut, ${label}`, `${steps.length} steps, ${disks} distinct disks a cut may leave, each started on`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

Cut('a declaration that changes two files: every cut leaves a disk the next start finishes from', async () => {
  await cutEverywhere(
    'two files changed',
    { 'a.conf': 'a v1\n', 'b.conf': 'b v1\n' },
    { 'a.conf': 'a v2\n', 'b.conf': 'b v2\n' },
  );
});

Cut('a declaration that adds a file and drops one: nothing is left on the disk unnamed', async () => {
  await cutEverywhere(
    'one added, one dropped',
    { 'a.conf': 'a v1\n', 'b.conf': 'b v1\n' },
    { 'a.conf': 'a v2\n', 'c.conf': 'c v1\n' },
  );
});

Cut.after(() => summary('power cut'));
Cut.run();
