import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, readdir, stat, writeFile, mkdir, rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeAtomic } from '../../src/sys/atomic.js';

const test = suite('writeAtomic');
let dir = '';

test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mesh-atomic-'));
});

test('writes the exact bytes with mode 0600, whatever the umask', async () => {
  const old = process.umask(0o000);
  try {
    await writeAtomic(join(dir, 'key'), 'private', 0o600);
  } finally {
    process.umask(old);
  }
  assert.is((await stat(join(dir, 'key'))).mode & 0o7777, 0o600);
  assert.is(await readFile(join(dir, 'key'), 'utf8'), 'private');
});

test('the mode is exact even where the umask would narrow it', async () => {
  const old = process.umask(0o077);
  try {
    await writeAtomic(join(dir, 'public'), 'x', 0o644);
  } finally {
    process.umask(old);
  }
  assert.is((await stat(join(dir, 'public'))).mode & 0o7777, 0o644);
});

test('sets the owner', async () => {
  await writeAtomic(join(dir, 'owned'), 'x', 0o640, { uid: 65534, gid: 65534 });
  const st = await stat(join(dir, 'owned'));
  assert.is(st.uid, 65534);
  assert.is(st.gid, 65534);
});

test('no partial file: a write that runs out of space leaves the old file whole and no temp file', async () => {
  // A 64 KiB tmpfs: the 1 MiB write fails part-way.
  const small = join(dir, 'small');
  await mkdir(small);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small]);
  try {
    await writeFile(join(small, 'conf'), 'old contents');
    let failed: Error | null = null;
    await writeAtomic(join(small, 'conf'), Buffer.alloc(1024 * 1024, 'n'), 0o644).catch((e) => (failed = e));
    assert.ok(failed, 'the write should fail for lack of space');
    assert.match((failed as unknown as Error).message, /conf/);
    assert.is(await readFile(join(small, 'conf'), 'utf8'), 'old contents');
    assert.equal(await readdir(small), ['conf']);
  } finally {
    execFileSync('umount', [small]);
  }
});

test('a rename that fails leaves no temp file behind', async () => {
  await mkdir(join(dir, 'taken', 'inside'), { recursive: true });
  let failed = false;
  await writeAtomic(join(dir, 'taken'), 'x', 0o644).catch(() => (failed = true));
  assert.ok(failed);
  assert.equal((await readdir(dir)).sort(), ['taken']);
});

test.after.each(async () => {
  await rm(dir, { recursive: true, force: true });
});

test.run();
