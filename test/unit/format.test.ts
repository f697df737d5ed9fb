// Every TypeScript file is as Prettier writes it (.prettierrc.json: 120
// columns): one layout, so a diff shows what changed and not who typed it.
// `npm run format` rewrites the tree. Pure: no servers.
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { suite } from '../harness/suite.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const prettier = join(root, 'node_modules', '.bin', 'prettier');

const S = suite('the tree is formatted');

S('prettier --check finds every tracked TypeScript file formatted', () => {
  const files = execFileSync('git', ['ls-files', '-z', '--', '*.ts'], { cwd: root })
    .toString()
    .split('\0')
    .filter(Boolean);
  assert.ok(files.length > 100, `only ${files.length} TypeScript files tracked`);
  const r = spawnSync(prettier, ['--check', ...files], { cwd: root, encoding: 'utf8' });
  assert.is(r.status, 0, `not formatted (run npm run format):\n${r.stdout}${r.stderr}`);
});

S('the check fails on a line longer than 120 columns (it can fail)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'format-'));
  copyFileSync(join(root, '.prettierrc.json'), join(dir, '.prettierrc.json'));
  const long = `export const x = [${Array.from({ length: 40 }, (_, i) => `'v${i}'`).join(', ')}];\n`;
  writeFileSync(join(dir, 'long.ts'), long);
  const r = spawnSync(prettier, ['--check', 'long.ts'], { cwd: dir, encoding: 'utf8' });
  assert.is.not(r.status, 0, 'a 400-column line passed the check');
});

S.run();
