// V2: agents upgraded as declared state, in waves. Ten real hosts, each run
// by `mesh-host supervise` with a package root of its own (under its own
// MESH_HOST_DIR), against a real serve. The fleet goes from the checkout's
// agent to a package of the next version in waves 1,50%,100%; one node of
// wave 2 is pinned to a package whose agent ends at once. The rollout halts
// naming it, that node is back on its previous agent by itself, the others
// of wave 2 keep the new one, and wave 3 never starts. The control plane's
// refusals each name their code, a pin on a node not enrolled too (the
// host's: test/host/agent_package).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, spawnProc, MESH_HOST, type Mesh, type Proc, type CliResult } from '../harness/mesh.js';
import { root, until as untilShort } from '../declare/helpers.js';
import { VERSION } from '../../src/sys/version.js';
import { makePackage } from '../host/agent_packages.js';

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
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>) => untilShort(what, f, 180_000);
const ok = (r: CliResult) => {
  assert.is(r.code, 0, r.stderr);
  return r.stdout;
};
const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stderr, `(${code})`);
};

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
  // Tokens one after another (each makes a broker account through the management API), then the hosts at once.
  const tokens = new Map<string, string>();
  for (const n of names) tokens.set(n, await ctx.mesh.token(n));
  await Promise.all(
    names.map(async (n) => {
      const h = ctx.mesh.host(n, { MESH_HOST_ROOTS: root(), MESH_HOST_RECONCILE_SECONDS: '3600' });
      const r = await h.enrol(tokens.get(n)!);
      assert.is(r.code, 0, r.stderr);
      const proc = spawnProc(process.execPath, [MESH_HOST, 'supervise'], h.env);
      ctx.hosts.set(n, { dir: h.dir, proc });
      await proc.waitFor(/connected to /, 180_000);
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
    const other = await makePackage(ctx.work, `${major + 1}.0.0`, {
      empty: true,
      note: ' (built again)',
    });
    refused(await ctx.mesh.cli(['agent', 'add', other]), 'MSHZ0');
    const junk = join(ctx.work, 'junk.deb');
    writeFileSync(junk, 'not a package');
    refused(await ctx.mesh.cli(['agent', 'add', junk]), 'MSHZ5');
    // A real package, but at a version that is not MAJOR.MINOR.PATCH.
    refused(await ctx.mesh.cli(['agent', 'add', await makePackage(ctx.work, '1.2', { empty: true })]), 'MSHZ5');
    const pins = await ctx.mesh.store.admin`select count(*)::int as n from assignment.agent_target`;
    assert.is(pins[0]!.n, 0, 'nothing refused was declared');
  },
);

U(
  'waves 1,50%,100%: the broken node of wave 2 halts the rollout and goes back by itself; the rest keep theirs',
  async (ctx) => {
    ok(await ctx.mesh.cli(['agent', 'add', await makePackage(ctx.work, NEXT)]));
    // A pin names an enrolled node: a token issued, or a typo, is not one.
    refused(await ctx.mesh.cli(['agent', 'upgrade', '--to', NEXT, '--node', 'nobody']), 'MSH21');
    assert.is((await ctx.mesh.store.admin`select count(*)::int as n from assignment.agent_target`)[0]!.n, 0);
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
