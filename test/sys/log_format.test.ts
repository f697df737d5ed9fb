// MESH_LOG_FORMAT=json: serve, mesh-host and the console write one JSON
// object a line, every line with the same keys in the same order (level,
// time, node, serial, code, message), so a log shipper needs no parser per
// program; plain stays the default; a mistyped format is refused at start.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, spawnProc, runCli, MESH, type Mesh, type Proc } from '../harness/mesh.js';
import { freePort } from '../harness/ports.js';
import { jsonLine } from '../../src/sys/log.js';

const KEYS = ['level', 'time', 'node', 'serial', 'code', 'message'];
const JSON_LOG = { MESH_LOG_FORMAT: 'json' };

/** Every line P said so far, each parsed; a line that is not a JSON object fails the test, naming it. */
function lines(p: Proc): Record<string, unknown>[] {
  return p
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`not one JSON object a line: ${l}`);
      }
    });
}

function sameKeys(ls: Record<string, unknown>[]): void {
  for (const l of ls) assert.equal(Object.keys(l), KEYS, JSON.stringify(l));
}

const L = suite<{ mesh: Mesh; procs: Proc[] }>('structured logs (MESH_LOG_FORMAT=json)');
L.before(async (ctx) => {
  ctx.mesh = await freshMesh({ serveEnv: JSON_LOG });
  ctx.procs = [];
});
L.after(async (ctx) => {
  await Promise.allSettled(ctx.procs.map((p) => p.stop()));
  await ctx.mesh.stop();
});

L('a line: the same keys every time, null where it has nothing to say; a refusal code makes it a warning', () => {
  const at = new Date('2026-01-02T03:04:05.000Z');
  assert.is(
    jsonLine('connected to 127.0.0.1:5671', {}, at),
    '{"level":"info","time":"2026-01-02T03:04:05.000Z","node":null,"serial":null,"code":null,"message":"connected to 127.0.0.1:5671"}',
  );
  const refused = JSON.parse(jsonLine('refused a declaration: forged: replayed (MSHN5)', { serial: 7 }, at));
  assert.equal([refused.level, refused.code, refused.serial], ['warn', 'MSHN5', 7]);
});

L('serve and mesh-host write only JSON lines; the host names itself, and its apply names the serial', async (ctx) => {
  const serve = await ctx.mesh.serve();
  const { proc } = await ctx.mesh.joined('logj1', JSON_LOG);
  await proc.waitFor(/"message":"applied declaration \d+/);
  const host = lines(proc);
  sameKeys(host);
  assert.ok(
    host.every((l) => l.node === 'logj1' || l.node === null),
    JSON.stringify(host),
  );
  const applied = host.find((l) => String(l.message).startsWith('applied declaration'))!;
  assert.is(applied.node, 'logj1');
  assert.is(applied.serial, Number(/applied declaration (\d+)/.exec(String(applied.message))![1]));
  const served = lines(serve);
  sameKeys(served);
  assert.ok(
    served.some((l) => /^serve: consuming mesh\.control/.test(String(l.message))),
    JSON.stringify(served),
  );
  await proc.stop();
});

L('the console writes JSON lines, and a refused sign-in carries its code', async (ctx) => {
  const port = await freePort();
  const c = spawnProc(process.execPath, [MESH, 'console', '--listen', `127.0.0.1:${port}`], {
    ...ctx.mesh.env,
    ...JSON_LOG,
  });
  ctx.procs.push(c);
  await c.waitFor(/"message":"console: serving/, 60_000);
  // Signing in is the link page's POST; a link's GET spends nothing and logs nothing.
  await fetch(`http://127.0.0.1:${port}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'token=not-a-token',
  });
  await c.waitFor(/a sign-in was refused/);
  const said = lines(c);
  sameKeys(said);
  const refused = said.find((l) => /sign-in was refused/.test(String(l.message)))!;
  assert.match(String(refused.code), /^MSH[0-9A-Z]{2}$/);
  assert.is(refused.level, 'warn');
});

L('plain is the default, and a format that is neither is refused before anything runs', async (ctx) => {
  const plain = await runCli(MESH, ['serve', '--metrics', 'nowhere'], ctx.mesh.env);
  assert.match(plain.stderr, /^mesh: the metrics address "nowhere" is not ADDRESS:PORT/);
  // A program's last word, its refusal, is a line of its log like any other.
  const json = await runCli(MESH, ['serve', '--metrics', 'nowhere'], { ...ctx.mesh.env, ...JSON_LOG });
  const [last] = json.stderr
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal([last!.level, last!.code], ['error', 'MSHJ7']);
  const bad = await runCli(MESH, ['node', 'list'], { ...ctx.mesh.env, MESH_LOG_FORMAT: 'yaml' });
  assert.is.not(bad.code, 0);
  assert.match(bad.stderr, /MESH_LOG_FORMAT must be plain or json, not "yaml".*MSHJ9/s);
});

L.run();
