// The front door stays small and whole: README.md is at most 150 lines, and
// every relative link and image in README.md and docs/**/*.md names a file
// that exists inside the repository (a moved or deleted page breaks no
// reader's path, and a clone holds everything a page links to).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { filesUnder } from './ids.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
export const README_LINES = 150;

/** The link targets of a markdown text: [..](t), ![..](t), [x]: t and <img src="t">, outside code. */
export function targets(md: string): string[] {
  const text = md.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]!);
  for (const m of text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) out.push(m[1]!);
  for (const m of text.matchAll(/<img\s[^>]*src="([^"]+)"/g)) out.push(m[1]!);
  return out;
}

/** Relative targets of the markdown FILES (paths under ROOT) that name no file: `file: target`. */
export function broken(root: string, files: string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    for (const t of targets(readFileSync(join(root, f), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(t) || t.startsWith('#')) continue; // a URL, or a place in this page
      const path = decodeURIComponent(t.split('#')[0]!.split('?')[0]!);
      const at = path.startsWith('/') ? join(root, path) : join(root, dirname(f), path);
      // A page outside the repository (../shared/) is not there in a clone.
      if (relative(root, at).startsWith('..') || !existsSync(at)) out.push(`${f}: ${t}`);
    }
  }
  return out;
}

const pages = () => ['README.md', ...filesUnder(root, ['docs'], (p) => p.endsWith('.md'))];

const L = suite('the front door: README.md and docs/');

L(`README.md is at most ${README_LINES} lines`, () => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
  assert.ok(lines <= README_LINES, `README.md is ${lines} lines: what is more than a newcomer's page belongs in docs/`);
});

L('every relative link and image in README.md and docs/ resolves to a file', () => {
  assert.equal(broken(root, pages()), [], 'links to files that do not exist');
});

L('every how-to page is listed in docs/howto/README.md, the index README.md links to', () => {
  const index = readFileSync(join(root, 'docs', 'howto', 'README.md'), 'utf8');
  const listed = new Set(targets(index).map((t) => t.split('#')[0]));
  const pages = filesUnder(root, ['docs/howto'], (p) => p.endsWith('.md') && !p.endsWith('/README.md'));
  assert.ok(pages.length > 0, 'docs/howto holds pages');
  assert.equal(
    pages.filter((p) => !listed.has(relative('docs/howto', p))),
    [],
    'how-to pages no index lists: a reader from README.md never finds them',
  );
  assert.ok(targets(readFileSync(join(root, 'README.md'), 'utf8')).includes('docs/howto/README.md'));
});

L('the check finds a link, an image and a reference to a file that is not there (it can fail)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'links-'));
  mkdirSync(join(dir, 'docs'));
  writeFileSync(join(dir, 'docs', 'here.md'), '# here\n');
  writeFileSync(
    join(dir, 'README.md'),
    [
      '[ok](docs/here.md#top) [web](https://example.org/x) [anchor](#a) `[code](gone.md)`',
      '[gone](docs/gone.md) ![img](docs/loop.svg) [outside](../shared/DESIGN.md)',
      '```',
      '[in a block](block.md)',
      '```',
      '[ref]: docs/missing.md',
      '<img src="docs/pic.png" alt="x">',
    ].join('\n'),
  );
  assert.equal(broken(dir, ['README.md', 'docs/here.md']), [
    'README.md: docs/gone.md',
    'README.md: docs/loop.svg',
    'README.md: ../shared/DESIGN.md',
    'README.md: docs/missing.md',
    'README.md: docs/pic.png',
  ]);
});

L.run();
