import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFile, stat, writeFile, readdir, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { secretDriver } from '../../host/apply/secret.js';
import { directoryDriver } from '../../host/apply/directory.js';
import { readState } from '../../host/apply/state.js';
import { apply } from '../../host/apply/engine.js';
import type { SecretFileResource } from '../../src/wire/resources.js';
import { sandbox, seal, type Sandbox } from './helpers.js';

const test = suite('secret and directory drivers');
let s: Sandbox;

test.before.each(async () => {
  s = await sandbox();
});

const secret = (path: string, plain: string): SecretFileResource => ({
  kind: 'secret',
  id: `secret:${path}`,
  path,
  mode: undefined as unknown as string,
  sealed: seal(plain),
});

test('S1 a secret is opened on the node and written 0600 by default', async () => {
  const path = join(s.root, 'db.password');
  assert.is(await secretDriver.apply(secret(path, 'hunter2'), s.ctx()), true);
  assert.is(await readFile(path, 'utf8'), 'hunter2');
  assert.is((await stat(path)).mode & 0o7777, 0o600);
  assert.is(await secretDriver.observe(secret(path, 'hunter2'), s.ctx()), 'ok');
  await writeFile(path, 'guess');
  assert.is(await secretDriver.observe(secret(path, 'hunter2'), s.ctx()), 'drift');
});

test('S2 a secret widened by hand is drift, and applying puts it back to 0600 (stat on disk)', async () => {
  const path = join(s.root, 'db.password');
  await secretDriver.apply(secret(path, 'hunter2'), s.ctx());
  await chmod(path, 0o644);
  assert.is(await secretDriver.observe(secret(path, 'hunter2'), s.ctx()), 'drift');
  assert.is(await secretDriver.apply(secret(path, 'hunter2'), s.ctx()), true);
  assert.is((await stat(path)).mode & 0o7777, 0o600);
});

test('the plaintext never reaches applied.json', async () => {
  const path = join(s.root, 'db.password');
  await apply([secret(path, 'hunter2')], 'declared', s.opts);
  const text = await readFile(join(s.stateDir, 'applied.json'), 'utf8');
  assert.not.match(text, 'hunter2');
  assert.is((await readState(s.stateDir))[0]!.target, path);
});

test('a directory is made with its exact mode; removed only when empty', async () => {
  const path = join(s.root, 'binds');
  const d = { kind: 'directory' as const, id: `directory:${path}`, path, mode: '0750' };
  assert.is(await directoryDriver.apply(d, s.ctx()), true);
  assert.is((await stat(path)).mode & 0o7777, 0o750);
  assert.is(await directoryDriver.apply(d, s.ctx()), false);
  await writeFile(join(path, 'not-ours'), 'x');
  const held = { id: d.id, kind: 'directory' as const, target: path, origin: 'declared' as const, digest: '' };
  await directoryDriver.remove(held, s.ctx());
  assert.equal(await readdir(path), ['not-ours']);
});

test.run();
