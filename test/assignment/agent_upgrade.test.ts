// V2: agents upgraded as declared state, in waves. Ten real hosts, each run
// by `mesh-host supervise` with a package root of its own (under its own
// MESH_HOST_DIR), against a real serve. The fleet goes from the checkout's
// agent to a package of the next version in waves 1,50%,100%; one node of
// wave 2 is pinned to a package whose agent ends at once. The rollout halts
// naming it, that node is back on its previous agent by itself, the others
// of wave 2 keep the new one, and wave 3 never starts. The refusals each
// name their code.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { freshMesh, spawnProc, MESH_HOST, type Mesh, type Proc, type CliResult } from '../harness/mesh.js';
import { root, until as untilShort } from '../declare/helpers.js';
import { run } from '../../src/sys/proc.js';
import { VERSION } from '../../src/sys/version.js';
import { checkPackage, unpack } from '../../host/apply/agent.js';
import { PackageFetch } from '../../host/upgrade/fetch.js';
import { readPackageAsk } from '../../src/wire/agent_package.js';
import type { AgentResource } from '../../src/wire/resources.js';

const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url));
const names = Array.from({ length: 10 }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
const [major, minor, patch] = VERSION.split('-')[0]!.split('.').map(Number) as [number, number, number];
const NEXT = `${major}.${minor}.${patch + 1}`;
const BROKEN = `${NEXT}-broken`;

interface Ctx {
  mesh: Mesh;
  work: string;
  hosts: Map<string, { dir: string; proc: Proc }>;
}
const U = suite<Ctx>('agent upgrade: waves, a broken package halts the rollout and its node goes back by itself');
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>) => untilShort(what, f, 90_000);
const ok = (r: CliResult) => {
  assert.is(r.code, 0, r.stderr);
  return r.stdout;
};
const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stderr, `(${code})`);
};

/** A mesh-host package of VERSION built from this checkout's agent; BROKEN: its agent ends as it starts. */
async function makePackage(
  work: string,
  version: string,
  opts: { broken?: boolean; empty?: boolean; note?: string } = {},
) {
  const stage = mkdtempSync(join(work, 'stage-'));
  mkdirSync(join(stage, 'DEBIAN'));
  writeFileSync(
    join(stage, 'DEBIAN', 'control'),
    `Package: mesh-host\nVersion: ${version}\nArchitecture: all\nMaintainer: mesh tests <tests@mesh.invalid>\nDescription: the mesh agent, for the upgrade test${opts.note ?? ''}\n`,
  );
  if (!opts.empty) {
    const lib = join(stage, 'usr', 'lib', 'mesh');
    mkdirSync(lib, { recursive: true });
    writeFileSync(join(lib, 'package.json'), JSON.stringify({ name: 'mesh', version, type: 'module' }));
    cpSync(join(CHECKOUT, 'dist', 'src'), join(lib, 'dist', 'src'), { recursive: true });
    cpSync(join(CHECKOUT, 'dist', 'host'), join(lib, 'dist', 'host'), { recursive: true });
    symlinkSync(join(CHECKOUT, 'node_modules'), join(lib, 'node_modules'));
    if (opts.broken) writeFileSync(join(lib, 'dist', 'host', 'cli.js'), 'process.exit(3);\n');
  }
  const deb = join(work, `mesh-host_${version}${opts.empty ? '-empty' : ''}_all.deb`);
  await run('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '--build', stage, deb]);
  return deb;
}

const versions = async (ctx: Ctx) =>
  Object.fromEntries(
    (await ctx.mesh.store.admin`select name, agent_version from inventory.node`).map((r) => [
      r.name as string,
      r.agent_version as string | null,
    ]),
  );
const current = (ctx: Ctx, n: string) => {
  try {
    return readlinkSync(join(ctx.hosts.get(n)!.dir, 'agent', 'current'));
  } catch {
    return null;
  }
};

U.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.work = mkdtempSync(join(tmpdir(), 'mesh-upgrade-'));
  await ctx.mesh.serve();
  ctx.hosts = new Map();
  await Promise.all(
    names.map(async (n) => {
      const h = ctx.mesh.host(n, { MESH_HOST_ROOTS: root(), MESH_HOST_RECONCILE_SECONDS: '3600' });
      const r = await h.enrol(await ctx.mesh.token(n));
      assert.is(r.code, 0, r.stderr);
      const proc = spawnProc(process.execPath, [MESH_HOST, 'supervise'], h.env);
      ctx.hosts.set(n, { dir: h.dir, proc });
      await proc.waitFor(/connected to /, 60_000);
    }),
  );
  await until(`every node reports mesh-host ${VERSION}`, async () =>
    Object.values(await versions(ctx)).every((v) => v === VERSION),
  );
});

U.after(async (ctx) => {
  await Promise.allSettled([...(ctx.hosts?.values() ?? [])].map((h) => h.proc.stop()));
  await ctx.mesh?.stop();
});

U(
  'refusals: an unknown version, one outside the skew rule, a version added twice, a file that is no package',
  async (ctx) => {
    refused(await ctx.mesh.cli(['agent', 'upgrade', '--to', '9.9.9']), 'MSHZ1');
    const far = await makePackage(ctx.work, `${major + 1}.0.0`, { empty: true });
    ok(await ctx.mesh.cli(['agent', 'add', far]));
    refused(await ctx.mesh.cli(['agent', 'upgrade', '--to', `${major + 1}.0.0`]), 'MSHZ2');
    // The same version, other bytes (the control file says more).
    const other = await makePackage(mkdtempSync(join(ctx.work, 'again-')), `${major + 1}.0.0`, {
      empty: true,
      note: ' (built again)',
    });
    refused(await ctx.mesh.cli(['agent', 'add', other]), 'MSHZ0');
    const junk = join(ctx.work, 'junk.deb');
    writeFileSync(junk, 'not a package');
    refused(await ctx.mesh.cli(['agent', 'add', junk]), 'MSHZ5');
    const pins = await ctx.mesh.store.admin`select count(*)::int as n from assignment.agent_target`;
    assert.is(pins[0]!.n, 0, 'nothing refused was declared');
  },
);

U(
  'the host: bytes that are not the declared sha256, a package with no agent, chunks that never come, a bad ask',
  async (ctx) => {
    const deb = readFileSync(await makePackage(ctx.work, '0.0.9', { empty: true }));
    const { createHash } = await import('node:crypto');
    const r: AgentResource = {
      id: 'agent',
      kind: 'agent',
      version: '0.0.9',
      sha256: createHash('sha256').update(deb).digest('hex'),
      size: deb.length,
    };
    checkPackage(r, deb);
    const bad = Buffer.from(deb);
    bad[bad.length - 1] ^= 1;
    assert.throws(() => checkPackage(r, bad), /\(MSHZ3\)|sha256/);
    try {
      checkPackage(r, bad);
    } catch (err) {
      assert.is((err as { code?: string }).code, 'MSHZ3');
    }
    const where = mkdtempSync(join(ctx.work, 'root-'));
    await unpack(where, r, deb).then(
      () => assert.unreachable('a package with no agent was unpacked'),
      (err: { code?: string }) => assert.is(err.code, 'MSHZ8'),
    );
    assert.not.ok(existsSync(join(where, 'versions', '0.0.9')), 'nothing of it is kept');
    const f = new PackageFetch(r.sha256, r.size, () => {}, 200);
    await f.bytes.then(
      () => assert.unreachable('bytes that never came'),
      (err: { code?: string }) => assert.is(err.code, 'MSHZ7'),
    );
    assert.throws(
      () => readPackageAsk(Buffer.from('{"sha256":"x","from":0,"count":99}')),
      (err: { code?: string }) => err.code === 'MSHZ6',
    );
  },
);

U(
  'waves 1,50%,100%: the broken node of wave 2 halts the rollout and goes back by itself; the rest keep theirs',
  async (ctx) => {
    ok(await ctx.mesh.cli(['agent', 'add', await makePackage(ctx.work, NEXT)]));
    ok(await ctx.mesh.cli(['agent', 'add', await makePackage(ctx.work, BROKEN, { broken: true })]));
    ok(await ctx.mesh.cli(['rollout', 'hold']));
    assert.match(ok(await ctx.mesh.cli(['agent', 'upgrade', '--to', NEXT])), /held by the rollout/);
    ok(await ctx.mesh.cli(['agent', 'upgrade', '--to', BROKEN, '--node', 'n03']));
    // Canaries pinned so the waves are known: n01; then n02 to n05 (n03 among them); then n06 to n10.
    ok(
      await ctx.mesh.cli([
        'rollout',
        'start',
        '--waves',
        '1,50%,100%',
        '--first',
        'n01,n02,n03,n04,n05',
        '--wait-healthy',
        '10m',
      ]),
    );
    const s = await until('the rollout halts', async () => {
      const st = JSON.parse(ok(await ctx.mesh.cli(['rollout', 'status', '--json']))) as {
        state: string;
        wave: number;
        reason: string | null;
        nodes: { node: string; wave: number; state: string }[];
      };
      return st.state === 'halted' && st;
    });
    assert.is(s.wave, 2, 'halted at wave 2');
    assert.match(s.reason ?? '', /n03: .*MSHZ4|n03: .*did not come up/);
    assert.ok(
      s.nodes.filter((n) => n.wave === 3).every((n) => n.state === 'held'),
      'wave 3 was never released',
    );
    const v = await versions(ctx);
    for (const n of ['n01', 'n02', 'n04', 'n05']) {
      assert.is(v[n], NEXT, `${n} reports the new agent`);
      assert.is(current(ctx, n), join('versions', NEXT), `${n} runs it from its package root`);
      assert.not.ok(existsSync(join(ctx.hosts.get(n)!.dir, 'agent', 'pending.json')), `${n}'s upgrade is proven`);
    }
    assert.is(v.n03, VERSION, 'the broken node reports its previous agent again');
    assert.is(current(ctx, 'n03'), null, 'the broken node runs the agent it was installed with');
    const failed = JSON.parse(readFileSync(join(ctx.hosts.get('n03')!.dir, 'agent', 'failed.json'), 'utf8')) as {
      version: string;
    };
    assert.is(failed.version, BROKEN);
    for (const n of names.slice(5)) assert.is(v[n], VERSION, `${n}, in wave 3, was not upgraded`);
  },
);

U.run();
