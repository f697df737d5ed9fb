// The generated references in docs/reference/ are what `npm run docs` makes
// of the code and the migrated store today: a command, an option, a refusal
// code, a view or a setting changed without regenerating fails here.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { freshStore, type Store } from '../harness/store.js';
import { references } from './reference.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The pages of FRESH that differ from those in DIR, each with the head of its diff. */
export function stale(dir: string, fresh: Map<string, string>, scratch: string): string[] {
  const out: string[] = [];
  mkdirSync(scratch, { recursive: true });
  for (const [name, text] of fresh) {
    const committed = join(dir, name);
    if (existsSync(committed) && readFileSync(committed, 'utf8') === text) continue;
    const made = join(scratch, name);
    writeFileSync(made, text);
    const diff = existsSync(committed)
      ? spawnSync('diff', ['-u', committed, made], { encoding: 'utf8' }).stdout.split('\n').slice(0, 30).join('\n')
      : 'missing';
    out.push(`${name}:\n${diff}`);
  }
  return out;
}

const C = suite<{ store: Store; fresh: Map<string, string> }>('docs/reference is generated from what it documents');

C.before(async (ctx) => {
  ctx.store = await freshStore();
  ctx.fresh = await references(ctx.store.admin);
});
C.after(async ({ store }) => {
  await store?.drop();
});

C('every generated page in docs/reference/ is as `npm run docs` makes it now', ({ fresh }) => {
  const differ = stale(join(root, 'docs/reference'), fresh, join(tmpdir(), 'reference'));
  assert.equal(
    differ.length,
    0,
    `docs/reference/ is out of date: run \`npm run docs\` and commit it\n${differ.join('\n')}`,
  );
});

C(
  'a command, a code, a view or a setting changed without regenerating is found (it can fail)',
  async ({ fresh, store }) => {
    const dir = join(tmpdir(), 'committed');
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of fresh) writeFileSync(join(dir, name), text);
    assert.equal(stale(dir, fresh, join(tmpdir(), 'scratch')), [], 'the same pages are current');
    // A view changed in the store (its comment) without regenerating.
    await store.admin.unsafe(`comment on view inventory.node_status is 'changed'`);
    const after = await references(store.admin);
    const differ = stale(dir, after, join(tmpdir(), 'scratch'));
    assert.equal(differ.length, 1, differ.join('\n'));
    assert.match(differ[0]!, /^sql\.md:\n[\s\S]*\+changed/);
    for (const name of ['cli.md', 'errors.md', 'settings.md']) assert.ok(after.has(name), name);
  },
);

C.run();
