import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdir, readFile, stat, symlink, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { fileDriver } from '../../host/apply/file.js';
import { sandbox, file, type Sandbox } from './helpers.js';

const test = suite('file driver');
let s: Sandbox;

test.before.each(async () => {
  s = await sandbox();
});

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

test('writes the exact bytes, mode and owner, and records id and path as changed', async () => {
  const path = join(s.root, 'etc', 'app.conf');
  const ctx = s.ctx();
  const r = file(path, 'port=1\n', { mode: '0640', owner: 'nobody' });
  assert.is(await fileDriver.apply(r, ctx), true);
  const st = await stat(path);
  assert.is(await readFile(path, 'utf8'), 'port=1\n');
  assert.is(st.mode & 0o7777, 0o640);
  assert.is(st.uid, 65534);
  assert.ok(ctx.changed.has(r.id) && ctx.changed.has(path));
});

test('an unchanged file is not written again and not recorded as changed', async () => {
  const r = file(join(s.root, 'a'), 'x');
  await fileDriver.apply(r, s.ctx());
  const ctx = s.ctx();
  assert.is(await fileDriver.apply(r, ctx), false);
  assert.is(ctx.changed.size, 0);
});

// Paths outside the roots are decoys in the sandbox, never real system files:
// with the rule broken by hand, the driver acts on them.
test('a path outside the roots is refused, naming the path and the roots', async () => {
  const outside = join(s.stateDir, 'decoy');
  const msg = await refusal(fileDriver.apply(file(outside, 'x'), s.ctx()));
  assert.match(msg, outside);
  assert.match(msg, s.root);
  assert.not.ok(
    await access(outside).then(
      () => true,
      () => false,
    ),
  );
});

test('".." is refused even where it would resolve inside a root', async () => {
  const sneaky = `${s.root}/sub/../inside`;
  const msg = await refusal(fileDriver.apply(file(sneaky, 'x'), s.ctx()));
  assert.match(msg, sneaky);
  assert.match(msg, '..');
  assert.not.ok(
    await access(join(s.root, 'inside')).then(
      () => true,
      () => false,
    ),
  );
});

test('a relative path is refused', async () => {
  const msg = await refusal(fileDriver.apply(file('etc/x', 'x'), s.ctx()));
  assert.match(msg, 'etc/x');
});

test('a symlinked directory leading out of the roots is refused', async () => {
  const outside = join(s.stateDir, 'outside');
  await mkdir(outside);
  await symlink(outside, join(s.root, 'link'));
  const msg = await refusal(fileDriver.apply(file(join(s.root, 'link', 'x'), 'x'), s.ctx()));
  assert.match(msg, 'outside the allowed roots');
  assert.not.ok(
    await access(join(outside, 'x')).then(
      () => true,
      () => false,
    ),
  );
});

test('D5 create-once: written when absent', async () => {
  const path = join(s.root, 'seed');
  assert.is(await fileDriver.apply(file(path, 'first', { createOnce: true }), s.ctx()), true);
  assert.is(await readFile(path, 'utf8'), 'first');
});

test('D5 create-once: untouched when present, even when the content differs', async () => {
  const path = join(s.root, 'seed');
  await writeFile(path, 'edited by the operator');
  const r = file(path, 'declared', { createOnce: true });
  const ctx = s.ctx();
  assert.is(await fileDriver.apply(r, ctx), false);
  assert.is(await readFile(path, 'utf8'), 'edited by the operator');
  assert.is(await fileDriver.observe(r, ctx), 'ok');
  assert.is(ctx.changed.size, 0);
});

test('observe: absent, then ok, then drift after a hand edit or a chmod', async () => {
  const path = join(s.root, 'conf');
  const r = file(path, 'declared');
  assert.is(await fileDriver.observe(r, s.ctx()), 'absent');
  await fileDriver.apply(r, s.ctx());
  assert.is(await fileDriver.observe(r, s.ctx()), 'ok');
  await writeFile(path, 'hand edit');
  assert.is(await fileDriver.observe(r, s.ctx()), 'drift');
  await fileDriver.apply(r, s.ctx());
  const { chmod } = await import('node:fs/promises');
  await chmod(path, 0o666);
  assert.is(await fileDriver.observe(r, s.ctx()), 'drift');
});

test('remove deletes the file and refuses a target outside the roots', async () => {
  const path = join(s.root, 'gone');
  const r = file(path, 'x');
  await fileDriver.apply(r, s.ctx());
  const held = { id: r.id, kind: 'file' as const, target: path, origin: 'declared' as const, digest: '' };
  await fileDriver.remove(held, s.ctx());
  assert.not.ok(
    await access(path).then(
      () => true,
      () => false,
    ),
  );
  const decoy = join(s.stateDir, 'decoy');
  await writeFile(decoy, "not mesh's");
  const msg = await refusal(fileDriver.remove({ ...held, target: decoy }, s.ctx()));
  assert.match(msg, decoy);
  assert.is(await readFile(decoy, 'utf8'), "not mesh's");
});

test.run();
