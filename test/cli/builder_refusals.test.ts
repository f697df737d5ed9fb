// mesh-builder refuses its enrolment line and its own credential file with a
// code, before any broker is asked (none runs here): a line on the command
// line, a line that is not one, a second enrolment over a kept credential, a
// credential that cannot be read or is damaged, and a run with no credential at all.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runAny } from '../../src/sys/proc.js';
import { writeEnrolLine } from '../../src/wire/builder_line.js';

const MESH_BUILDER = fileURLToPath(new URL('../../src/builder/cli.js', import.meta.url));
const B = suite<{ dir: string }>('mesh-builder refuses its line and its credential with codes');
B.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-builder-refusals-'));
});
B.after(({ dir }) => rmSync(dir, { recursive: true, force: true }));

/** A builder folder holding credential.json as given (a string, or a directory where the file should be). */
function builderDir(dir: string, name: string, credential?: string | 'dir'): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true, mode: 0o700 });
  if (credential === 'dir') mkdirSync(join(d, 'credential.json'));
  else if (credential !== undefined) writeFileSync(join(d, 'credential.json'), credential, { mode: 0o600 });
  return d;
}

// Bounded: a refusal taken away would go on to dial a broker that is not there.
const builder = (d: string, args: string[], input?: string) =>
  runAny(process.execPath, [MESH_BUILDER, ...args], {
    env: { PATH: process.env.PATH, MESH_BUILDER_DIR: d },
    input,
    timeoutMs: 60_000,
  });
const refused = (r: { code: number; stderr: string }, code: string): string => {
  assert.is(r.code, 1, r.stderr);
  assert.ok(r.stderr.startsWith('mesh-builder: '), r.stderr);
  assert.ok(r.stderr.trimEnd().endsWith(`(${code}).`), r.stderr);
  return r.stderr;
};
const VALID = JSON.stringify({
  v: 1,
  name: 'b1',
  broker: { host: '127.0.0.1', port: 1, vhost: '/', user: 'builder-b1', fingerprint: 'AB' },
  password: 'p',
  requester: 'r',
});

B('a line that is not a builder enrolment line is refused with MSHP0, and nothing is kept', async ({ dir }) => {
  const d = builderDir(dir, 'p0');
  assert.match(
    refused(await builder(d, ['enrol'], 'meshb1.bm90IGpzb24'), 'MSHP0'),
    /this is not a builder enrolment line: paste the whole line `mesh builder add NAME` printed/,
  );
  // Well formed but for its broker's port: refused as the line it is not, before any broker is dialled.
  const line = writeEnrolLine({
    broker: 'mq1.example.net:70000',
    fingerprint: Array(32).fill('AB').join(':'),
    vhost: '/',
    name: 'b1',
    user: 'builder-b1',
    password: 'p',
    requester: 'r',
  });
  refused(await builder(d, ['enrol'], line), 'MSHP0');
  assert.equal(readdirSync(d), [], 'no credential was written');
});

B('a line on the command line is refused with MSHU5 before it is read, and nothing is kept (E7)', async ({ dir }) => {
  const d = builderDir(dir, 'u5');
  const line = writeEnrolLine({
    broker: '127.0.0.1:5671',
    fingerprint: Array(32).fill('AB').join(':'),
    vhost: '/',
    name: 'b1',
    user: 'builder-b1',
    password: 'p',
    requester: 'r',
  });
  assert.match(
    refused(await builder(d, ['enrol', line]), 'MSHU5'),
    /a builder line on mesh-builder enrol's command line: .*: give it on standard input as mesh builder add prints it: echo LINE \| mesh-builder enrol/,
  );
  assert.equal(readdirSync(d), [], 'no credential was written');
});

B('an enrolled builder refuses a second line with MSHP1, before reading it', async ({ dir }) => {
  const d = builderDir(dir, 'p1', VALID);
  assert.match(
    refused(await builder(d, ['enrol'], 'anything'), 'MSHP1'),
    /already enrolled as builder b1: to enrol it again, remove .*credential\.json first/,
  );
});

B('a credential that exists but cannot be read is a fault, MSHP4, for enrol and run alike', async ({ dir }) => {
  const d = builderDir(dir, 'p4', 'dir');
  for (const args of [['run'], ['enrol']])
    assert.match(refused(await builder(d, args, 'anything'), 'MSHP4'), /credential\.json exists but cannot be read/);
});

B('a damaged credential is refused with MSHP5: not JSON, or not a credential', async ({ dir }) => {
  for (const [name, text] of [
    ['p5a', '{"v": 1,'],
    ['p5b', JSON.stringify({ v: 1, name: 'b1' })],
  ] as const) {
    assert.match(refused(await builder(builderDir(dir, name, text), ['run']), 'MSHP5'), /credential\.json is damaged/);
  }
});

B('mesh-builder run with no credential is refused with MSHP6, naming enrol', async ({ dir }) => {
  assert.match(
    refused(await builder(builderDir(dir, 'p6'), ['run']), 'MSHP6'),
    /no credential at .*credential\.json: run mesh-builder enrol/,
  );
});

B.run();
