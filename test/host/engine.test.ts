import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apply, reconcile, removeOrphans, holdings } from '../../host/apply/engine.js';
import { serviceDriver } from '../../host/apply/service.js';
import { drivers } from '../../host/apply/registry.js';
import type { Resource, ServiceResource, WireguardResource } from '../../src/wire/resources.js';
import { sandbox, file, counter, starts, until, alive, type Sandbox } from './helpers.js';
import { spawn } from 'node:child_process';
import { readFileSync as readSync, statSync } from 'node:fs';
import { lockPath } from '../../host/apply/lock.js';
import { fileURLToPath } from 'node:url';
import type { AnyDriver } from '../../host/apply/registry.js';

const test = suite('apply engine');
let s: Sandbox;
const services: ServiceResource[] = [];

test.before.each(async () => {
  s = await sandbox();
});

test.after.each(async () => {
  for (const r of services.splice(0)) {
    await serviceDriver.remove({ id: r.id, kind: 'service', target: r.name, origin: 'declared', digest: '' }, s.ctx());
  }
});

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

test('applies in order and records each held resource with its origin, state file 0600', async () => {
  const a = file(join(s.root, 'a'), 'a');
  const r = await apply([a], 'declared', s.opts);
  assert.equal(r.changed, [a.id]);
  assert.equal(r.failed, []);
  assert.equal(
    r.held.map((h) => [h.id, h.origin, h.target]),
    [[a.id, 'declared', a.path]],
  );
  assert.equal(await holdings(s.stateDir), r.held);
  assert.is((await stat(join(s.stateDir, 'applied.json'))).mode & 0o7777, 0o600);
});

test('removal by omission: a declared resource left out of the next declaration is removed', async () => {
  const a = file(join(s.root, 'a'), 'a');
  const b = file(join(s.root, 'b'), 'b');
  await apply([a, b], 'declared', s.opts);
  const r = await apply([a], 'declared', s.opts);
  assert.equal(r.removed, [b.id]);
  assert.ok(await exists(a.path));
  assert.not.ok(await exists(b.path));
  assert.equal(
    (await holdings(s.stateDir)).map((h) => h.id),
    [a.id],
  );
});

test('D3 carried resources survive a declared apply that omits them', async () => {
  const bundled = file(join(s.root, 'bundled'), 'from the bundle');
  await apply([bundled], 'carried', s.opts);
  const r = await apply([file(join(s.root, 'declared'), 'x')], 'declared', s.opts);
  assert.equal(r.removed, []);
  assert.ok(await exists(bundled.path));
  assert.equal(
    (await holdings(s.stateDir)).map((h) => [h.id, h.origin]).sort(),
    [
      [bundled.id, 'carried'],
      [`file:${join(s.root, 'declared')}`, 'declared'],
    ].sort(),
  );
});

test('D3 a carried apply never removes declared resources', async () => {
  const d = file(join(s.root, 'declared'), 'x');
  await apply([d], 'declared', s.opts);
  const r = await apply([], 'carried', s.opts);
  assert.equal(r.removed, []);
  assert.ok(await exists(d.path));
});

test('D3 state from before the origin field reads carried', async () => {
  const legacy = join(s.root, 'legacy');
  await writeFile(legacy, 'old host');
  await writeFile(
    join(s.stateDir, 'applied.json'),
    JSON.stringify({ v: 1, resources: [{ id: `file:${legacy}`, kind: 'file', target: legacy, digest: 'x' }] }),
  );
  assert.is((await holdings(s.stateDir))[0]!.origin, 'carried');
  assert.equal((await apply([], 'declared', s.opts)).removed, []);
  assert.ok(await exists(legacy), 'a declared apply leaves it');
  assert.equal((await apply([], 'carried', s.opts)).removed, [`file:${legacy}`]);
  assert.not.ok(await exists(legacy), 'a carried apply owns it');
});

test('one failing resource does not stop the others; the result names each failure', async () => {
  const good = file(join(s.root, 'good'), 'ok');
  const outside = file(join(s.stateDir, 'decoy'), 'x'); // outside the roots; a sandbox path, never a real one
  const wg: WireguardResource = {
    kind: 'wireguard',
    id: 'wireguard:mesh0',
    name: 'mesh0',
    address: '10.99.0.2/24',
    peers: [],
  };
  // A host whose registry lacks a kind (an older mesh-host) fails just that resource.
  const withoutWireguard = new Map([...drivers].filter(([kind]) => kind !== 'wireguard'));
  const r = await apply([outside, wg, good], 'declared', { ...s.opts, drivers: withoutWireguard });
  assert.equal(r.changed, [good.id]);
  assert.equal(r.failed.map((f) => f.id).sort(), [outside.id, wg.id].sort());
  assert.match(r.failed.find((f) => f.id === wg.id)!.error, /No driver for resource kind "wireguard"/);
  assert.ok(await exists(good.path));
  assert.not.ok(await exists(outside.path));
});

test('a failed resource that was held stays held, so a later omission still removes it', async () => {
  const f = file(join(s.root, 'f'), 'v1');
  await apply([f], 'declared', s.opts);
  const broken = { ...f, mode: 'rw-r--r--' };
  const r = await apply([broken], 'declared', s.opts);
  assert.equal(
    r.failed.map((x) => x.id),
    [f.id],
  );
  assert.equal(r.removed, []);
  assert.ok(await exists(f.path));
  assert.equal((await apply([], 'declared', s.opts)).removed, [f.id]);
});

test('an id listed twice refuses the whole apply', async () => {
  const f = file(join(s.root, 'f'), 'v1');
  let msg = '';
  await apply([f, f], 'declared', s.opts).catch((e) => (msg = e.message));
  assert.match(msg, 'twice');
  assert.not.ok(await exists(f.path));
});

test('D4 restart-on: restarts in the apply where the file changed, and not in the next', async () => {
  const conf = file(join(s.root, 'app.conf'), 'v1');
  const count = join(s.root, 'starts');
  const svc = counter('app', count, { restartOn: [conf.path] });
  services.push(svc);

  const first = await apply([conf, svc], 'declared', s.opts);
  assert.equal(first.restarted, [], 'just created: started with the new file, no restart');
  assert.is(
    (
      await until(
        () => starts(count),
        (x) => x.length === 1,
      )
    ).length,
    1,
  );

  const second = await apply([file(conf.path, 'v2'), svc], 'declared', s.opts);
  assert.equal(second.changed, [conf.id]);
  assert.equal(second.restarted, [svc.id]);
  assert.is(
    (
      await until(
        () => starts(count),
        (x) => x.length === 2,
      )
    ).length,
    2,
  );

  const third = await apply([file(conf.path, 'v2'), svc], 'declared', s.opts);
  assert.equal(third.restarted, []);
  await new Promise((ok) => setTimeout(ok, 200));
  assert.is((await starts(count)).length, 2);
});

test('D4 restart-on by id, and a service not listing the file is left running', async () => {
  const conf = file(join(s.root, 'app.conf'), 'v1');
  const svc = counter('app', join(s.root, 'starts'), { restartOn: [conf.id] });
  const other = counter('other', join(s.root, 'other-starts'));
  services.push(svc, other);
  await apply([conf, svc, other], 'declared', s.opts);
  const r = await apply([file(conf.path, 'v2'), svc, other], 'declared', s.opts);
  assert.equal(r.restarted, [svc.id]);
  assert.is(
    (
      await until(
        () => starts(join(s.root, 'other-starts')),
        (x) => x.length === 1,
      )
    ).length,
    1,
  );
});

test('D6 reconcile puts back a hand-edited file and a killed service, and leaves the rest', async () => {
  const conf = file(join(s.root, 'app.conf'), 'declared');
  const keep = file(join(s.root, 'keep'), 'fine');
  const count = join(s.root, 'starts');
  const svc = counter('app', count);
  services.push(svc);
  const decl: Resource[] = [conf, keep, svc];
  await apply(decl, 'declared', s.opts);
  await until(
    () => starts(count),
    (x) => x.length === 1,
  );

  const quiet = await reconcile(decl, 'declared', s.opts);
  assert.equal(quiet.corrected, []);

  await writeFile(conf.path, 'hand edit');
  const pid = JSON.parse(await readFile(join(s.stateDir, 'services', 'app.pid'), 'utf8')).pid;
  process.kill(-pid, 'SIGKILL');
  await until(
    async () => alive(pid),
    (a) => !a,
  );

  const r = await reconcile(decl, 'declared', s.opts);
  assert.equal(r.corrected.sort(), [conf.id, svc.id].sort());
  assert.is(await readFile(conf.path, 'utf8'), 'declared');
  assert.is(
    (
      await until(
        () => starts(count),
        (x) => x.length === 2,
      )
    ).length,
    2,
  );
});

test('D6 reconcile restarts what reads a file it put back (D4)', async () => {
  const conf = file(join(s.root, 'app.conf'), 'declared');
  const count = join(s.root, 'starts');
  const svc = counter('app', count, { restartOn: [conf.path] });
  services.push(svc);
  await apply([conf, svc], 'declared', s.opts);
  await writeFile(conf.path, 'hand edit');
  const r = await reconcile([conf, svc], 'declared', s.opts);
  assert.equal(r.corrected, [conf.id]);
  assert.equal(r.restarted, [svc.id]);
});

test('removeOrphans: a host that lost its state removes declared leftovers from its last report, never carried ones', async () => {
  const kept = file(join(s.root, 'kept'), 'still declared');
  const orphan = file(join(s.root, 'orphan'), 'no longer declared');
  const bundled = file(join(s.root, 'bundled'), 'from the bundle');
  await apply([bundled], 'carried', s.opts);
  const report = (await apply([kept, orphan], 'declared', s.opts)).held;
  const { rm } = await import('node:fs/promises');
  await rm(join(s.stateDir, 'applied.json'));
  // The report of an older host may lack origins: those read carried.
  const legacy = { ...report.find((h) => h.id === bundled.id)! } as Partial<(typeof report)[0]>;
  delete legacy.origin;
  const handed = [...report.filter((h) => h.id !== bundled.id), legacy as (typeof report)[0]];

  const r = await removeOrphans(handed, [kept], s.opts);
  assert.equal(r.removed, [orphan.id]);
  assert.equal(r.failed, []);
  assert.not.ok(await exists(orphan.path));
  assert.ok(await exists(kept.path));
  assert.ok(await exists(bundled.path));
});

/** Someone is blocked waiting for a flock on FILE (a `->` line of /proc/locks names its inode): the other apply waits on the lock. */
function lockWaited(file: string): boolean {
  let ino: number;
  try {
    ino = statSync(file).ino;
  } catch {
    return false;
  }
  return readSync('/proc/locks', 'utf8')
    .split('\n')
    .some((l) => l.includes('->') && l.split(/\s+/).some((f) => f.endsWith(`:${ino}`)));
}

test('a bundle run in another process during a host apply: both records intact in applied.json (lock on the state)', async () => {
  const script = fileURLToPath(new URL('./apply_carried.js', import.meta.url));
  let other: ReturnType<typeof spawn> | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);
  const registeredFile = drivers.get('file')!;
  // The host's apply is in the middle of its work when the other process starts,
  // and goes on only once that one has finished or is blocked on the lock.
  const slow: AnyDriver = {
    ...registeredFile,
    async apply(r, ctx) {
      other = spawn(process.execPath, [script, s.stateDir, s.root], { stdio: ['ignore', 'pipe', 'inherit'] });
      exited = new Promise((res) => other!.once('exit', (code) => res(code)));
      let out = '';
      other.stdout!.on('data', (d) => {
        out += d;
      });
      await until(
        async () => ({ out, done: other!.exitCode !== null, waiting: lockWaited(lockPath(s.stateDir)) }),
        (v) => v.done || v.waiting,
        20_000,
      );
      return registeredFile.apply(r, ctx);
    },
  };
  const mine = new Map(drivers);
  mine.set('file', slow);
  const d = file(join(s.root, 'declared'), 'x');
  await apply([d], 'declared', { ...s.opts, drivers: mine });
  assert.is(await exited, 0, 'the other apply finished');
  const held = (await holdings(s.stateDir)).map((h) => [h.id, h.origin]).sort();
  assert.equal(
    held,
    [
      [`file:${join(s.root, 'carried')}`, 'carried'],
      [d.id, 'declared'],
    ].sort(),
  );
});

test.run();
