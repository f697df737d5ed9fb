// The packages a fleet runs, joined to advisories: Debian versions compare as
// dpkg compares them (checked against dpkg --compare-versions itself on many
// generated pairs), a node's list is kept from its changes and a change
// against another base asks for the whole list, and an OSV advisory lists
// exactly the nodes below its fix.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRoles, closeRoles, enrol, refusedWith, type SqlCtx } from '../helpers.js';
import { loadAdvisories } from '../../../src/inventory/advisories.js';

const P = suite<SqlCtx>('the packages a fleet runs, joined to advisories');

P.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  for (const n of ['below', 'at', 'above', 'other']) await enrol(ctx.as, n);
});
P.after(async (ctx) => {
  await closeRoles(ctx);
});

/** A seeded generator: the same pairs every run, so a failure is the same failure again. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** deb-version(7)'s syntax: what dpkg accepts without a warning. */
const DEB_VERSION = /^([0-9]+:)?[0-9][A-Za-z0-9.+~]*(-[A-Za-z0-9.+~]+)?$/;

/** Versions dense in what dpkg orders by hand: ~, letters against other characters, leading zeros, epochs, revisions. */
function versions(n: number): [string, string][] {
  const r = random(40);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const digits = ['0', '1', '2', '9', '10', '01', '001', '19', '100'];
  const chars = ['.', '+', '~', '~~', 'a', 'b', 'A', 'z', 'rc', '.', '+b', '~rc'];
  const part = (len: number) => {
    let s = pick(digits);
    for (let i = 0; i < len; i++) s += r() < 0.5 ? pick(chars) : pick(digits);
    return s;
  };
  const version = () => {
    const epoch = r() < 0.2 ? `${pick(['0', '1', '2', '01'])}:` : '';
    const upstream = part(Math.floor(r() * 4));
    const revision = r() < 0.6 ? `-${part(Math.floor(r() * 3))}` : '';
    return epoch + upstream + revision;
  };
  const pairs: [string, string][] = [];
  for (let i = 0; i < n; i++) {
    const a = version();
    // Half the pairs are near each other (one piece added or changed), where the order is decided late.
    const b =
      r() < 0.5
        ? version()
        : r() < 0.5
          ? a + pick(chars) + (r() < 0.5 ? pick(digits) : '')
          : a.slice(0, -1) + pick(['~', '0', 'a', '.', '1']);
    if (DEB_VERSION.test(b)) pairs.push([a, b]);
  }
  return pairs;
}

const KNOWN: [string, string][] = [
  ['1.0', '1.0-0'],
  ['1.0~rc1', '1.0'],
  ['1.0~rc1', '1.0~rc1~'],
  ['1:0.1', '2.0'],
  ['1.0a', '1.0+'],
  ['1.0', '1.0.0'],
  ['2.30-1', '2.4-1'],
  ['3.0.11-1~deb12u2', '3.0.11-1'],
  ['3.0.11-1~deb12u2', '3.0.11-1~deb12u1'],
  ['1.2.3-1+b1', '1.2.3-1'],
  ['0:1.0', '1.0'],
  ['1.0-1', '1.0-1~'],
  ['10', '9'],
  ['1.0.0001', '1.0.1'],
];

/** dpkg's own answer for each pair, from one shell that asks it pair by pair. */
function dpkgOrder(pairs: [string, string][]): number[] {
  const script =
    'while read a b; do if dpkg --compare-versions "$a" lt "$b"; then echo -1; elif dpkg --compare-versions "$a" eq "$b"; then echo 0; else echo 1; fi; done';
  const r = spawnSync('sh', ['-c', script], {
    input: pairs.map((p) => p.join(' ')).join('\n') + '\n',
    encoding: 'utf8',
  });
  assert.is(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').map(Number);
}

P('inventory.compare_debian_version agrees with dpkg --compare-versions on every pair', async ({ as }) => {
  const pairs = [...KNOWN, ...versions(700)];
  const want = dpkgOrder(pairs);
  assert.is(want.length, pairs.length);
  const got = await as.inventory`select inventory.compare_debian_version(p->>0, p->>1) as c
    from jsonb_array_elements(${as.inventory.json(pairs as never)}::jsonb) with ordinality as x(p, i) order by i`;
  const wrong = pairs.filter((_, i) => got[i]!.c !== want[i]).map((p, i) => `${p[0]} vs ${p[1]}: dpkg ${want[i]}`);
  assert.equal(
    pairs.map((p, i) => [p, got[i]!.c]).filter(([, c], i) => c !== want[i]),
    [],
    `differs from dpkg on ${wrong.length} pairs`,
  );
  // Both sides of the order occur often enough to mean something.
  assert.ok(want.filter((w) => w < 0).length > 100 && want.filter((w) => w > 0).length > 100);
});

P('a version dpkg would not accept is refused (MSHO0)', async ({ as }) => {
  for (const bad of ['', 'a1.0', '1.0:3', '1.0-', '1.0 beta', '1.0_1'])
    await refusedWith(as.inventory`select inventory.compare_debian_version(${bad}, '1.0')`, 'MSHO0');
});

/** The digest the host sends: sha256 over NAME TAB ARCH TAB VERSION TAB SOURCE lines in byte order (host/packages.ts). */
const digest = (list: string[][]) =>
  createHash('sha256')
    .update(
      [...list]
        .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : a[1]! < b[1]! ? -1 : a[1]! > b[1]! ? 1 : 0))
        .map((p) => `${p[0]}\t${p[1]}\t${p[2]}\t${p[3] ?? p[0]}\n`)
        .join(''),
    )
    .digest('hex');

async function record(ctx: SqlCtx, node: string, change: Record<string, unknown>): Promise<string> {
  const [r] = await ctx.as
    .inventory`select inventory.record_packages(${node}::text, ${ctx.as.inventory.json(change as never)}::jsonb) as r`;
  return r!.r as string;
}

const listOf = async (ctx: SqlCtx, node: string) =>
  (
    await ctx.as
      .inventory`select name, arch, version, source from inventory.node_package where node = ${node} order by name, arch`
  ).map((r) => [r.name, r.arch, r.version, r.source]);

P(
  'a node sends its whole list once, then only its changes; a change on another base asks for the whole list',
  async (ctx) => {
    const one = [
      ['libssl3', 'amd64', '3.0.11-1~deb12u1', 'openssl'],
      ['openssl', 'amd64', '3.0.11-1~deb12u1', 'openssl'],
      ['zlib1g', 'amd64', '1:1.2.13.dfsg-1', 'zlib'],
    ];
    assert.is(await record(ctx, 'other', { digest: digest(one), base: null, set: one }), 'full');
    assert.equal(await listOf(ctx, 'other'), one);
    const two = [['libssl3', 'amd64', '3.0.11-1~deb12u2', 'openssl'], one[1]!, ['curl', 'amd64', '7.88.1-10', 'curl']];
    const change = {
      digest: digest(two),
      base: digest(one),
      set: [two[0], two[2]],
      gone: [['zlib1g', 'amd64']],
    };
    assert.is(await record(ctx, 'other', change), 'changed');
    assert.equal(
      await listOf(ctx, 'other'),
      [...two].sort((a, b) => a[0]!.localeCompare(b[0]!)),
    );
    // The same change again: its base is no longer what the mesh holds; nothing is applied.
    assert.is(await record(ctx, 'other', change), 'resync');
    assert.equal(
      await listOf(ctx, 'other'),
      [...two].sort((a, b) => a[0]!.localeCompare(b[0]!)),
    );
    // A change on the right base that does not come out at the digest the node names: kept, and the whole list asked for.
    assert.is(await record(ctx, 'other', { digest: digest(one), base: digest(two), set: [], gone: [] }), 'resync');
    const [s] = await ctx.as.inventory`select digest, packages from inventory.package_state where node = 'other'`;
    assert.equal({ ...s }, { digest: digest(two), packages: 3 });
    // A package without a source field is its own source.
    assert.is(
      await record(ctx, 'other', {
        digest: digest([['mesh-host', 'all', '0.3.2']]),
        base: null,
        set: [['mesh-host', 'all', '0.3.2']],
      }),
      'full',
    );
    assert.equal(await listOf(ctx, 'other'), [['mesh-host', 'all', '0.3.2', 'mesh-host']]);
  },
);

P('an OSV advisory lists exactly the nodes below its fixed version', async (ctx) => {
  const fixed = '3.0.11-1~deb12u2';
  const at: Record<string, string> = { below: '3.0.11-1~deb12u1', at: fixed, above: '3.0.13-1~deb12u1' };
  for (const [node, version] of Object.entries(at)) {
    const list = [['libssl3', 'amd64', version, 'openssl']];
    assert.is(await record(ctx, node, { digest: digest(list), base: null, set: list }), 'full');
  }
  const osv = {
    id: 'DSA-5532-1',
    summary: 'openssl - security update',
    affected: [
      {
        package: { ecosystem: 'Debian:12', name: 'openssl' },
        ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed }] }],
      },
      {
        package: { ecosystem: 'PyPI', name: 'openssl' },
        ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }],
      },
    ],
  };
  const [n] = await ctx.as
    .inventory`select inventory.load_advisory(${ctx.as.inventory.json(osv as never)}::jsonb) as n`;
  assert.is(n!.n, 1, 'the Debian range only');
  const rows = await ctx.as
    .inventory`select advisory, node, name, version, fixed from inventory.advisory_node order by node`;
  assert.equal(
    rows.map((r) => ({ ...r })),
    [{ advisory: 'DSA-5532-1', node: 'below', name: 'libssl3', version: at.below, fixed }],
  );
  // Loaded again: replaced, not doubled.
  await ctx.as.inventory`select inventory.load_advisory(${ctx.as.inventory.json(osv as never)}::jsonb)`;
  assert.is((await ctx.as.inventory`select count(*)::int as n from inventory.advisory_range`)[0]!.n, 1);
  // A binary named by the advisory itself, its source another: matched by its own name too.
  await ctx.as.inventory`select inventory.load_advisory(${ctx.as.inventory.json({
    id: 'OSV-LIBSSL',
    affected: [{ package: { ecosystem: 'Debian', name: 'libssl3' }, versions: [at.above] }],
  } as never)}::jsonb)`;
  const hits = await ctx.as.inventory`select node from inventory.advisory_node where advisory = 'OSV-LIBSSL'`;
  assert.equal(
    hits.map((h) => h.node),
    ['above'],
  );
});

P('an advisory with no Debian version in it is refused (MSHO1), one with no id (MSHO6)', async ({ as }) => {
  await refusedWith(
    as.inventory`select inventory.load_advisory(${as.inventory.json({ id: 'PYSEC-1', affected: [{ package: { ecosystem: 'PyPI', name: 'x' } }] } as never)}::jsonb)`,
    'MSHO1',
  );
  await refusedWith(as.inventory`select inventory.load_advisory('{"summary": "no id"}'::jsonb)`, 'MSHO6');
});

P('an advisories file that is not JSON is refused before the store is asked (MSHO3)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'osv-'));
  try {
    writeFileSync(join(dir, 'osv.json'), '<html>not found</html>');
    const err = await loadAdvisories(join(dir, 'osv.json')).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    assert.is(err?.code, 'MSHO3', String(err));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

P.run();
