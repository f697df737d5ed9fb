// `mesh` loads only the noun its command names (src/cli/nouns.ts), finding it
// by the words read from each file's `.command('...')` lines. A command that
// reading missed (a name not written as such a line) would send that command
// down the load-everything path (slower, still right), and a word read under
// the wrong noun would leave its command unknown to sade ("Invalid command").
// Both are caught here from what the files really register.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { program } from '../../src/sys/program.js';
import { NOUNS, nounsFor } from '../../src/cli/nouns.js';
import { runCli, MESH } from '../harness/mesh.js';

const L = suite('the CLI loads the noun its command names');

type Tree = Record<string, unknown>;

L("each noun's words are exactly the first words of the commands its file registers", async () => {
  const p = program('mesh', 'x');
  const tree = () => (p.prog as unknown as { tree: Tree }).tree;
  const seen = new Map<string, string>();
  for (const n of NOUNS) {
    const before = new Set(Object.keys(tree()));
    p.noun(n.noun, await n.load());
    const words = new Set(
      Object.entries(tree())
        .filter(([k, v]) => !before.has(k) && !k.startsWith('__') && typeof v === 'object')
        .map(([k]) => k.split(' ')[0]!),
    );
    assert.equal([...words].sort(), [...n.words].sort(), `the words of ${n.noun}`);
    for (const w of words) {
      assert.not.ok(seen.has(w), `${w} is a first word of both ${seen.get(w)} and ${n.noun}`);
      seen.set(w, n.noun);
    }
  }
});

L('declare loads its noun alone; --help, a typo or no command loads every noun', () => {
  assert.equal(
    nounsFor(['declare', '--all']).map((n) => n.noun),
    ['declaration'],
  );
  assert.equal(
    nounsFor(['--json', 'node', 'list']).map((n) => n.noun),
    ['node'],
  );
  for (const argv of [['--help'], [], ['decalre', '--all']])
    assert.is(nounsFor(argv).length, NOUNS.length, argv.join(' '));
});

L('the real CLI runs a command of one noun, and --help still lists every noun', async () => {
  const help = await runCli(MESH, ['--help'], process.env);
  assert.is(help.code, 0, help.stderr);
  for (const w of ['mesh declare', 'mesh node list', 'mesh token issue', 'mesh serve', 'mesh broker'])
    assert.ok(help.stdout.includes(w), `--help lists ${w}`);
  const one = await runCli(MESH, ['declare', '--help'], process.env);
  assert.is(one.code, 0, one.stderr);
  assert.match(one.stdout, /Compose, sign and owe NODE its declaration/);
  const typo = await runCli(MESH, ['decalre', '--all'], process.env);
  assert.is.not(typo.code, 0);
  assert.match(typo.stdout + typo.stderr, /Invalid command: decalre/);
});

L.run();
