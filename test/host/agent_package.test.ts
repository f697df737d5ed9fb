// V2 on the host alone: a package is checked against the sha256 and size the
// signed declaration names before anything of it is unpacked; one with no
// agent in it is not kept; chunks that never come fail the apply; the guard
// switches an upgrade that does not stay up, or does not report in time,
// back to the version before it, and leaves a proven one alone.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { checkPackage, unpack } from '../../host/apply/agent.js';
import { PackageFetch } from '../../host/upgrade/fetch.js';
import { guard, switchTo, confirm, MAX_STARTS, readFailed } from '../../host/upgrade/package_root.js';
import { readPackageAsk, writePackageAsk } from '../../src/wire/agent_package.js';
import type { AgentResource } from '../../src/wire/resources.js';
import { makePackage } from './agent_packages.js';

const T = suite('agent package on the host (V2)');
const work = mkdtempSync(join(tmpdir(), 'mesh-agent-package-'));
const resourceOf = (version: string, bytes: Buffer): AgentResource => ({
  id: 'agent',
  kind: 'agent',
  version,
  sha256: createHash('sha256').update(bytes).digest('hex'),
  size: bytes.length,
});
const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
};

T('bytes that are not the declared sha256 or size are refused (MSHZ3); the declared ones pass', async () => {
  const deb = readFileSync(await makePackage(work, '0.0.9', { empty: true }));
  const r = resourceOf('0.0.9', deb);
  checkPackage(r, deb);
  const flipped = Buffer.from(deb);
  flipped[flipped.length - 1]! ^= 1;
  assert.is(
    code(() => checkPackage(r, flipped)),
    'MSHZ3',
  );
  assert.is(
    code(() => checkPackage(r, Buffer.concat([deb, Buffer.from('x')]))),
    'MSHZ3',
  );
});

T('a package with no agent in it is refused (MSHZ8) and nothing of it is kept', async () => {
  const deb = readFileSync(await makePackage(work, '0.0.8', { empty: true }));
  const root = mkdtempSync(join(work, 'root-'));
  await unpack(root, resourceOf('0.0.8', deb), deb).then(
    () => assert.unreachable('a package with no agent was unpacked'),
    (err: { code?: string }) => assert.is(err.code, 'MSHZ8'),
  );
  assert.not.ok(existsSync(join(root, 'versions', '0.0.8')));
  assert.not.ok(existsSync(join(root, 'versions', '0.0.8.partial')));
});

T('chunks that never come fail the fetch (MSHZ7); a bad ask is refused (MSHZ6)', async () => {
  const asked: number[] = [];
  const f = new PackageFetch('a'.repeat(64), 10, (from) => asked.push(from), 200);
  await f.bytes.then(
    () => assert.unreachable('bytes that never came'),
    (err: { code?: string }) => assert.is(err.code, 'MSHZ7'),
  );
  assert.equal(asked, [0]);
  assert.equal(readPackageAsk(writePackageAsk({ sha256: 'b'.repeat(64), from: 4, count: 4 })), {
    sha256: 'b'.repeat(64),
    from: 4,
    count: 4,
  });
  assert.is(
    code(() => readPackageAsk(Buffer.from(JSON.stringify({ sha256: 'x', from: 0, count: 1 })))),
    'MSHZ6',
  );
  assert.is(
    code(() => readPackageAsk(Buffer.from(JSON.stringify({ sha256: 'b'.repeat(64), from: 0, count: 99 })))),
    'MSHZ6',
  );
});

T('chunks arriving in any order make the package, asked for a window at a time', async () => {
  const asks: number[] = [];
  const parts = [0, 1, 2, 3, 4, 5].map((i) => Buffer.from(`chunk ${i};`));
  const f = new PackageFetch('c'.repeat(64), 48, (from) => asks.push(from), 5000);
  for (const n of [1, 0, 3, 2]) f.take({ sha256: 'c'.repeat(64), n, of: 6 }, parts[n]!);
  f.take({ sha256: 'd'.repeat(64), n: 4, of: 6 }, Buffer.from('not ours'));
  for (const n of [5, 4]) f.take({ sha256: 'c'.repeat(64), n, of: 6 }, parts[n]!);
  assert.is((await f.bytes).toString(), parts.join(''));
  assert.equal(asks, [0, 4]);
});

T('the guard: an upgrade that ends at every start goes back to the version before after three starts', async () => {
  const root = mkdtempSync(join(work, 'root-'));
  mkdirSync(join(root, 'versions', '1.0.0'), { recursive: true });
  await switchTo(root, '1.0.0', 'e'.repeat(64), 60_000);
  assert.ok(await confirm(root, '1.0.0'));
  assert.equal(await guard(root), {}, 'a proven version is left alone');
  mkdirSync(join(root, 'versions', '1.0.1'), { recursive: true });
  await switchTo(root, '1.0.1', 'f'.repeat(64), 60_000);
  assert.is(readlinkSync(join(root, 'current')), join('versions', '1.0.1'));
  for (let i = 1; i <= MAX_STARTS; i++) assert.is((await guard(root)).starting?.starts, i);
  const g = await guard(root);
  assert.is(g.rolledBack?.version, '1.0.1');
  assert.is(readlinkSync(join(root, 'current')), join('versions', '1.0.0'), 'back on the version before');
  assert.is(readFailed(root)?.sha256, 'f'.repeat(64), 'remembered as failed');
  assert.equal(await guard(root), {}, 'nothing pending any more');
});

T('the guard: an upgrade past its deadline goes back, to the installed agent when it came from there', async () => {
  const root = mkdtempSync(join(work, 'root-'));
  mkdirSync(join(root, 'versions', '1.0.1'), { recursive: true });
  await switchTo(root, '1.0.1', 'f'.repeat(64), 1000);
  assert.is((await guard(root)).starting?.starts, 1);
  const g = await guard(root, Date.now() + 2000);
  assert.match(g.rolledBack?.reason ?? '', /deadline/);
  assert.not.ok(existsSync(join(root, 'current')), 'no current: the installed agent starts');
});

T('a proven upgrade removes the versions it replaced, and only then', async () => {
  const root = mkdtempSync(join(work, 'root-'));
  for (const v of ['1.0.0', '1.0.1', '1.0.2.partial']) mkdirSync(join(root, 'versions', v), { recursive: true });
  await switchTo(root, '1.0.0', 'e'.repeat(64), 60_000);
  assert.ok(await confirm(root, '1.0.0'));
  assert.equal(readdirSync(join(root, 'versions')), ['1.0.0'], 'an older version and a half-unpacked one are gone');
  mkdirSync(join(root, 'versions', '1.0.1'), { recursive: true });
  await switchTo(root, '1.0.1', 'f'.repeat(64), 60_000);
  assert.equal(readdirSync(join(root, 'versions')).sort(), ['1.0.0', '1.0.1'], 'pending: the version before is kept');
  assert.not.ok(await confirm(root, '1.0.0'), 'another version reporting proves nothing');
  assert.equal(readdirSync(join(root, 'versions')).sort(), ['1.0.0', '1.0.1'], 'nor removes anything');
  assert.ok(await confirm(root, '1.0.1'));
  assert.equal(readdirSync(join(root, 'versions')), ['1.0.1'], 'proven: only the version that runs is left');
});

T.after(() => {});
T.run();
