// `mesh` registers every noun's commands from the one table each noun's file
// is (src/cli/mesh.ts): --help lists them all grouped by noun, a command of
// one noun runs, and a mistyped one is refused by name.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { runCli, MESH } from '../harness/mesh.js';

const L = suite('the CLI knows every noun');

L('the real CLI runs a command of one noun, and --help lists every noun', async () => {
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
