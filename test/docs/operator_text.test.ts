// What an operator reads speaks to an operator: no invariant id ("(D6)",
// "O1") in a program's --help (its description, every command's, every
// option's and example) nor in a refusal's meaning and remedy in the
// register. Ids belong in code comments, tests and docs/design.md.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { REGISTER } from '../../src/sys/errors.js';
import { program } from '../../src/sys/program.js';
import { programs, commandsOf } from './reference.js';
import { idsIn } from './ids.js';
import type { Program } from '../../src/sys/program.js';

/** Every text a person reads in P's --help, labelled: `mesh drift: Every resource ...`. */
function helpTexts(p: Program): [string, string][] {
  const tree = (p.prog as unknown as { tree: Record<string, { describe?: string[] }> }).tree;
  const out: [string, string][] = [[p.bin, (tree.__default__?.describe ?? []).join(' ')]];
  for (const [name, c] of commandsOf(p)) {
    const at = `${p.bin} ${name}`;
    out.push([at, (c.describe ?? []).join(' ')]);
    for (const [flag, said] of c.options) out.push([`${at} ${flag}`, said]);
    for (const e of c.examples) out.push([`${at} example`, e]);
  }
  return out;
}

const withIds = (texts: [string, string][]) =>
  texts.filter(([, t]) => idsIn(t).length).map(([at, t]) => `${at}: ${idsIn(t).join(', ')} in "${t}"`);

const O = suite('operator-facing text carries no invariant ids');

O('no --help text of mesh, mesh-host or mesh-builder names an invariant id', async () => {
  const texts = (await programs()).flatMap(helpTexts);
  assert.ok(texts.length > 100, `only ${texts.length} texts read`);
  assert.equal(withIds(texts), [], 'say what happens and what to do instead');
});

O("no refusal's meaning or remedy in the register names an invariant id", () => {
  const texts = REGISTER.flatMap((c): [string, string][] => [
    [`${c.code} meaning`, c.meaning],
    [`${c.code} remedy`, c.remedy],
  ]);
  assert.equal(withIds(texts), [], 'say what was refused and what to do instead');
});

O('the check finds an id in a help text (it can fail)', () => {
  const p = program('mesh', 'x');
  p.prog.command('drift').describe('Every resource a host put back (D6).').option('--json', 'Print as JSON (O1)');
  assert.equal(withIds(helpTexts(p)), [
    'mesh drift: D6 in "Every resource a host put back (D6)."',
    'mesh drift --json: O1 in "Print as JSON (O1)"',
  ]);
});

O.run();
