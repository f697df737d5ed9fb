// D3: each origin manages only its own. A resource the bundle carried is not
// taken over by a declaration that names the same id: the declared apply
// fails that one resource, and the carried one stays as the bundle left it.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { apply, holdings } from '../../host/apply/engine.js';
import { sandbox, file, type Sandbox } from './helpers.js';

const test = suite<{ s: Sandbox }>("D3 one origin never takes over the other's");
test.before(async (ctx) => {
  ctx.s = await sandbox();
});
test.after(async (ctx) => {
  await rm(dirname(ctx.s.root), { recursive: true, force: true });
});

test("a declared resource with a carried one's id fails, naming the remedy; the carried one is untouched", async ({
  s,
}) => {
  const path = join(s.root, 'shared.conf');
  await apply([file(path, 'from the bundle')], 'carried', s.opts);
  const r = await apply([file(path, 'from the mesh')], 'declared', s.opts);
  assert.equal(r.changed, []);
  assert.is(r.failed.length, 1);
  assert.match(r.failed[0]!.error, /is already held as carried.*Remove it from the carried resources first/);
  assert.is(await readFile(path, 'utf8'), 'from the bundle');
  assert.equal(
    (await holdings(s.stateDir)).map((h) => [h.id, h.origin]),
    [[`file:${path}`, 'carried']],
  );
});

test.run();
