import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { serviceDriver } from '../../host/apply/service.js';
import type { ServiceResource } from '../../src/wire/resources.js';
import { sandbox, counter, starts, until, alive, type Sandbox } from './helpers.js';

const test = suite('supervised service (no systemd)');
let s: Sandbox;
const made: ServiceResource[] = [];

test.before.each(async () => {
  s = await sandbox();
});

test.after.each(async () => {
  for (const r of made.splice(0)) {
    await serviceDriver.remove({ id: r.id, kind: 'service', target: r.name, origin: 'declared', digest: '' }, s.ctx());
  }
});

async function pidRecord(name: string) {
  return JSON.parse(await readFile(join(s.stateDir, 'services', `${name}.pid`), 'utf8')) as {
    pid: number;
    digest: string;
  };
}

test('starts argv detached in its own process group, with a pid file holding the argv digest', async () => {
  const count = join(s.root, 'starts');
  const r = counter('web', count);
  made.push(r);
  assert.is(await serviceDriver.observe(r, s.ctx()), 'absent');
  assert.is(await serviceDriver.apply(r, s.ctx()), true);
  const rec = await pidRecord('web');
  assert.is(rec.digest, serviceDriver.digest(r));
  const stat = (await readFile(`/proc/${rec.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  assert.is(Number(stat[2]), rec.pid, 'process group is its own');
  assert.is(Number(stat[3]), rec.pid, 'session is its own');
  assert.is(
    (
      await until(
        () => starts(count),
        (x) => x.length === 1,
      )
    ).length,
    1,
  );
  assert.is(await serviceDriver.observe(r, s.ctx()), 'ok');
});

test('a restarted host finds its running service by the pid file and starts no second copy', async () => {
  const count = join(s.root, 'starts');
  const r = counter('web', count);
  made.push(r);
  await serviceDriver.apply(r, s.ctx());
  await until(
    () => starts(count),
    (x) => x.length === 1,
  );
  // The driver keeps nothing in memory: a fresh context is a restarted host.
  assert.is(await serviceDriver.apply(r, s.ctx()), false);
  await new Promise((ok) => setTimeout(ok, 200));
  assert.is((await starts(count)).length, 1);
});

test('a pid file naming a reused pid (another start time) reads absent', async () => {
  const r = counter('web', join(s.root, 'starts'));
  made.push(r);
  await serviceDriver.apply(r, s.ctx());
  const rec = await pidRecord('web');
  const { writeFile } = await import('node:fs/promises');
  // Point the record at a live process that is not the service: this one.
  await writeFile(join(s.stateDir, 'services', 'web.pid'), JSON.stringify({ ...rec, pid: process.pid }));
  assert.is(await serviceDriver.observe(r, s.ctx()), 'absent');
  process.kill(-rec.pid, 'SIGKILL');
});

test('observe says drift when the service runs another argv; apply replaces it', async () => {
  const count = join(s.root, 'starts');
  const r = counter('web', count);
  made.push(r);
  await serviceDriver.apply(r, s.ctx());
  const first = (await pidRecord('web')).pid;
  const changed = counter('web', count, { exec: [...r.exec, 'argv0'] });
  assert.is(await serviceDriver.observe(changed, s.ctx()), 'drift');
  assert.is(await serviceDriver.apply(changed, s.ctx()), true);
  assert.not.ok(alive(first), 'the old process is gone');
  assert.is(await serviceDriver.observe(changed, s.ctx()), 'ok');
});

test('restart ends the whole process group, children included, and starts again', async () => {
  const kids = join(s.root, 'kids');
  const r: ServiceResource = {
    kind: 'service',
    id: 'service:tree',
    name: 'tree',
    exec: ['/bin/sh', '-c', `sleep 1000 & echo $! >> ${kids}; wait`],
  };
  made.push(r);
  await serviceDriver.apply(r, s.ctx());
  const [kid] = await until(
    () => starts(kids),
    (x) => x.length === 1,
  );
  const leader = (await pidRecord('tree')).pid;
  await serviceDriver.restart!(r, s.ctx());
  assert.not.ok(alive(Number(kid)), 'the child of the service was stopped too');
  assert.not.ok(alive(leader));
  assert.is(
    (
      await until(
        () => starts(kids),
        (x) => x.length === 2,
      )
    ).length,
    2,
  );
  assert.is(await serviceDriver.observe(r, s.ctx()), 'ok');
});

test('a service that ignores TERM is killed after 5 s', async () => {
  const r: ServiceResource = {
    kind: 'service',
    id: 'service:stubborn',
    name: 'stubborn',
    exec: ['/bin/sh', '-c', `trap '' TERM; echo $$ >> ${join(s.root, 'stubborn')}; while :; do sleep 0.1; done`],
  };
  made.push(r);
  await serviceDriver.apply(r, s.ctx());
  // Only once its trap is set: a TERM that came before it would end it at once, proving nothing.
  await until(
    () => starts(join(s.root, 'stubborn')),
    (x) => x.length === 1,
  );
  const pid = (await pidRecord('stubborn')).pid;
  const t0 = Date.now();
  await serviceDriver.remove(
    { id: r.id, kind: 'service', target: 'stubborn', origin: 'declared', digest: '' },
    s.ctx(),
  );
  const took = Date.now() - t0;
  assert.not.ok(alive(pid));
  // TERM first, and KILL only after the grace: it outlived the TERM (no upper bound: a loaded machine is slow, not wrong).
  assert.ok(took >= 4900, `took ${took} ms`);
});

test('remove stops it and deletes its pid file', async () => {
  const r = counter('web', join(s.root, 'starts'));
  await serviceDriver.apply(r, s.ctx());
  const pid = (await pidRecord('web')).pid;
  await serviceDriver.remove({ id: r.id, kind: 'service', target: 'web', origin: 'declared', digest: '' }, s.ctx());
  assert.not.ok(alive(pid));
  assert.not.ok(
    await access(join(s.stateDir, 'services', 'web.pid')).then(
      () => true,
      () => false,
    ),
  );
  assert.is(await serviceDriver.observe(r, s.ctx()), 'absent');
});

test("the service does not inherit the host's environment (secrets never travel in env)", async () => {
  process.env.MESH_STORE_INVENTORY = 'postgres://inventory:secret@localhost/mesh';
  const r = counter('web', join(s.root, 'starts'));
  made.push(r);
  await serviceDriver.apply(r, s.ctx());
  const environ = await readFile(`/proc/${(await pidRecord('web')).pid}/environ`, 'utf8');
  assert.not.match(environ, 'MESH_STORE_INVENTORY');
  assert.match(environ, 'PATH=');
  delete process.env.MESH_STORE_INVENTORY;
});

test('names and argv are checked before anything runs', async () => {
  for (const bad of [
    { name: 'Web', exec: ['/bin/true'] },
    { name: '../x', exec: ['/bin/true'] },
    { name: 'web', exec: ['true'] },
  ]) {
    const r = { kind: 'service', id: 'service:x', ...bad } as ServiceResource;
    let msg = '';
    await serviceDriver.apply(r, s.ctx()).catch((e) => (msg = e.message));
    assert.match(msg, /refused/);
  }
});

test.run();
