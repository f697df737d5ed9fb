// E7: a token never travels on a command line. mesh-host enrol reads it on
// standard input; while an enrolment runs, another user of the machine
// reading every /proc/*/cmdline does not find it (and does find a token put on
// a command line, so the look is one that can fail). A token given as an
// argument is refused before it is used, with the remedy.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync } from 'node:fs';
import { freshMesh, spawnProc, runCli, MESH_HOST, type Mesh, type Proc } from '../harness/mesh.js';

const run = promisify(execFile);

const S = suite<{ mesh: Mesh; serve: Proc }>('tokens never on argv (E7)');
S.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
S.after(async (ctx) => {
  await ctx.mesh.stop();
});

/** Another user of this machine (nobody) reads every process's command line: the pids whose line holds TEXT. */
async function seenBy(text: string): Promise<number[]> {
  const look = `const fs = require('node:fs'); let n = 0; const hits = [];
for (const d of fs.readdirSync('/proc')) {
  if (!/^\\d+$/.test(d)) continue;
  let line; try { line = fs.readFileSync('/proc/' + d + '/cmdline', 'latin1'); } catch { continue; }
  n++; if (line.includes(process.env.LOOK_FOR)) hits.push(Number(d));
}
process.stdout.write(JSON.stringify({ n, hits }));`;
  const { stdout } = await run(process.execPath, ['-e', look], {
    env: { PATH: process.env.PATH, LOOK_FOR: text },
    uid: 65534,
    gid: 65534,
    timeout: 30_000,
  });
  const { n, hits } = JSON.parse(stdout) as { n: number; hits: number[] };
  assert.ok(n > 1, `nobody read ${n} command lines: a look that reads none proves nothing`);
  return hits;
}

S('while an enrolment runs, another user reading /proc/*/cmdline finds no token', async ({ mesh, serve }) => {
  const token = await mesh.token('in1');
  const host = mesh.host('in1');
  // Serve stopped: the enrolment waits for its answer, and its process stands to be looked at.
  process.kill(serve.child.pid!, 'SIGSTOP');
  let enrolling: Proc | undefined;
  const onArgv = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)', token], { stdio: 'ignore' });
  try {
    enrolling = spawnProc(process.execPath, [MESH_HOST, 'enrol'], host.env, token);
    await enrolling.waitFor(/sent the enrolment request of in1 through/);
    // The one process holding the token on its command line is the one put there to show the look sees it.
    assert.equal(await seenBy(token), [onArgv.pid!]);
  } finally {
    onArgv.kill('SIGKILL');
    process.kill(serve.child.pid!, 'SIGCONT');
  }
  assert.is(await enrolling.exited(60_000), 0, enrolling.output());
});

S('a token on the command line is refused with MSHU2 and the remedy, before anything is kept', async ({ mesh }) => {
  const token = await mesh.token('in2');
  const host = mesh.host('in2');
  const r = await runCli(MESH_HOST, ['enrol', token], host.env);
  assert.is(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /^mesh-host: a token on mesh-host enrol's command line: every user of this machine can read it .*: give it on standard input as mesh token issue prints it: echo TOKEN \| mesh-host enrol \(MSHU2\)\.\n$/,
  );
  assert.equal(readdirSync(host.dir), []);
  const [t] = await mesh.store.admin`select spent_at from inventory.token where node = 'in2'`;
  assert.is(t!.spent_at, null, 'the token was not spent');
});

S('no token on standard input is refused with MSHU3', async ({ mesh }) => {
  const host = mesh.host('in3');
  const r = await runCli(MESH_HOST, ['enrol'], host.env, '\n');
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /no token on standard input: give it on standard input .* \(MSHU3\)\.\n$/);
  assert.equal(readdirSync(host.dir), []);
});

S('mesh token issue prints the line that gives the token on standard input', async ({ mesh }) => {
  const r = await mesh.cli(['token', 'issue', 'in4']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /^echo mesh1\.[A-Za-z0-9_-]+ \| mesh-host enrol\n$/);
});

S.run();
