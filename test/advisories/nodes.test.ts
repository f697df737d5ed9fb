// The packages real hosts report, joined to an OSV advisory loaded from a
// file: three hosts share this machine, so each reads its own dpkg status
// (MESH_HOST_DPKG_ROOT), one below the fixed version, one at it, one above.
// Only the one below is listed. A host sends its list whole once, then its
// changes; a change the mesh cannot apply to the list it holds makes serve
// ask for the whole list again, and the list comes out right. The rollout the
// advisory starts pins the fixed version on the node below alone, and its
// host installs it with apt from a local repository of packages this test
// builds with dpkg-deb, into that node's own root: never this machine's.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { suite } from '../harness/suite.js';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { cli, until } from '../declare/helpers.js';

const FIXED = '3.0.11-1~deb12u2';
const AT: Record<string, string> = { below: '3.0.11-1~deb12u1', at: FIXED, above: '3.0.13-1~deb12u1' };

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  roots: Record<string, string>;
  repo: string;
}
const A = suite<Ctx>('the nodes an advisory affects, from the packages real hosts report');

/** A dpkg status file as dpkg writes one: the packages given installed, and one removed (config-files) that is not. */
function status(packages: [name: string, version: string, source?: string][]): string {
  const para = ([name, version, source]: [string, string, string?]) =>
    [
      `Package: ${name}`,
      'Status: install ok installed',
      'Priority: optional',
      'Architecture: amd64',
      ...(source ? [`Source: ${source} (${version})`] : []),
      `Version: ${version}`,
      'Description: a package',
      ' of the test',
    ].join('\n');
  const removed = 'Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1.0-1\n';
  return [...packages.map(para), removed].join('\n\n') + '\n';
}

function writeStatus(root: string, packages: [string, string, string?][]): void {
  mkdirSync(join(root, 'var/lib/dpkg'), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/status'), status(packages));
}

const held = async (mesh: Mesh, node: string) =>
  (
    await mesh.store.admin`select name, version, source from inventory.node_package where node = ${node} order by name`
  ).map((r) => `${r.name} ${r.version} ${r.source}`);

/** A file repository holding libssl3 at the fixed version, built here with dpkg-deb. */
function repository(): string {
  const repo = mkdtempSync(join(tmpdir(), 'mesh-repo-'));
  const pkg = join(repo, 'build');
  mkdirSync(join(pkg, 'DEBIAN'), { recursive: true });
  mkdirSync(join(pkg, 'usr/share/doc/libssl3'), { recursive: true });
  writeFileSync(
    join(pkg, 'DEBIAN/control'),
    `Package: libssl3\nSource: openssl\nVersion: ${FIXED}\nArchitecture: amd64\nMaintainer: mesh <mesh@localhost>\nDescription: the fixed library of the test\n`,
  );
  writeFileSync(join(pkg, 'usr/share/doc/libssl3/fixed'), `${FIXED}\n`);
  execFileSync('dpkg-deb', ['-Zgzip', '--build', pkg, join(repo, `libssl3_${FIXED}_amd64.deb`)], { stdio: 'ignore' });
  writeFileSync(
    join(repo, 'Packages'),
    execFileSync('dpkg-scanpackages', ['-m', '.', '/dev/null'], { cwd: repo, stdio: ['ignore', 'pipe', 'ignore'] }),
  );
  return repo;
}

/** A dpkg root apt can work in: its sources name REPO alone. */
function aptRoot(root: string, repo: string): void {
  for (const d of [
    'var/lib/dpkg/info',
    'var/lib/dpkg/updates',
    'etc/apt/apt.conf.d',
    'etc/apt/preferences.d',
    'etc/apt/sources.list.d',
    'var/lib/apt/lists/partial',
    'var/cache/apt/archives/partial',
    'var/log/apt',
  ])
    mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/available'), '');
  writeFileSync(join(root, 'etc/apt/sources.list'), `deb [trusted=yes] file:${repo} ./\n`);
}

A.before(async (ctx) => {
  ctx.repo = repository();
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.roots = {};
  for (const [node, version] of Object.entries(AT)) {
    const root = mkdtempSync(join(tmpdir(), `mesh-dpkg-${node}-`));
    writeStatus(root, [
      ['libssl3', version, 'openssl'],
      ['zlib1g', '1:1.2.13.dfsg-1'],
    ]);
    aptRoot(root, ctx.repo);
    ctx.roots[node] = root;
    await ctx.mesh.joined(node, {
      MESH_HOST_ROOTS: mkdtempSync(join(tmpdir(), 'mesh-root-')),
      MESH_HOST_DPKG_ROOT: root,
      MESH_HOST_RECONCILE_SECONDS: node === 'below' ? '1' : '3600',
    });
  }
});
A.after(async (ctx) => {
  await ctx.mesh?.stop();
});

A('each host reports its installed packages, and nothing removed', async ({ mesh }) => {
  for (const [node, version] of Object.entries(AT))
    await until(`${node}'s packages in inventory.node_package`, async () => {
      const h = await held(mesh, node);
      return h.length === 2 && h[0] === `libssl3 ${version} openssl` && h[1] === 'zlib1g 1:1.2.13.dfsg-1 zlib1g';
    });
});

A('an OSV advisory loaded from a file lists exactly the node below its fixed version', async ({ mesh }) => {
  const file = join(mesh.home, 'DSA-5532-1.json');
  writeFileSync(
    file,
    JSON.stringify({
      schema_version: '1.6.0',
      id: 'DSA-5532-1',
      summary: 'openssl - security update',
      affected: [
        {
          package: { ecosystem: 'Debian:12', name: 'openssl' },
          ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: FIXED }] }],
        },
      ],
    }),
  );
  assert.match(await cli(mesh, 'advisories', 'load', file), /loaded DSA-5532-1: 1 affected range/);
  const rows = JSON.parse(await cli(mesh, 'advisories', '--json')) as Record<string, string>[];
  assert.equal(rows, [
    { advisory: 'DSA-5532-1', node: 'below', name: 'libssl3', arch: 'amd64', version: AT.below, fixed: FIXED },
  ]);
  assert.match(
    await cli(mesh, 'advisories'),
    /DSA-5532-1\s+below\s+libssl3\s+amd64\s+3\.0\.11-1~deb12u1\s+3\.0\.11-1~deb12u2/,
  );
});

A('the rollout the advisory starts reaches only the node below, whose host installs the fix with apt', async (ctx) => {
  const { mesh } = ctx;
  const serials = async () =>
    Object.fromEntries(
      (await mesh.store.admin`select node, max(serial)::int as s from assignment.declaration group by node`).map(
        (r) => [r.node, r.s],
      ),
    );
  const before = await serials();
  const r = JSON.parse(await cli(mesh, 'advisories', 'rollout', 'DSA-5532-1', '--waves', '100%', '--json'));
  assert.equal(r.pinned, [{ node: 'below', name: 'libssl3', version: FIXED }]);
  assert.equal(r.out, ['below']);
  await until(
    'the rollout completes',
    async () => {
      const [s] = await mesh.store.admin`select state from assignment.rollout_status where id = ${r.rollout}`;
      return s?.state === 'done';
    },
    60_000,
  );
  const nodes = await mesh.store.admin`select node from assignment.rollout_nodes where rollout = ${r.rollout}`;
  assert.equal(
    nodes.map((n) => n.node),
    ['below'],
    'the rollout holds the affected node alone',
  );
  const after = await serials();
  assert.equal(
    { at: after.at, above: after.above },
    { at: before.at, above: before.above },
    'nothing declared to the others',
  );
  const [d] = await mesh.store.admin`select resources as r from assignment.compose_each(array['below'])`;
  assert.match(d!.r as string, /"kind": ?"package"/);
  // apt installed it into below's own root, from the repository.
  assert.match(readFileSync(join(ctx.roots.below!, 'usr/share/doc/libssl3/fixed'), 'utf8'), FIXED);
  await until('below reports the fixed version', async () =>
    (await held(mesh, 'below')).includes(`libssl3 ${FIXED} openssl`),
  );
  assert.equal(JSON.parse(await cli(mesh, 'advisories', '--json')), [], 'nothing affected once the fix is applied');
});

A('a rollout of an advisory that lists no node is refused (MSHO5), of one not loaded MSHO4', async ({ mesh }) => {
  const none = await mesh.cli(['advisories', 'rollout', 'DSA-5532-1']);
  assert.match(none.stderr, /MSHO5/);
  const unknown = await mesh.cli(['advisories', 'rollout', 'DSA-0000-1']);
  assert.match(unknown.stderr, /MSHO4/);
});

A(
  'a package changed by hand goes out as a change; a change the mesh cannot apply brings the whole list',
  async (ctx) => {
    const { mesh, serve } = ctx;
    const before = serve.output().length;
    writeStatus(ctx.roots.below!, [
      ['libssl3', FIXED, 'openssl'],
      ['curl', '7.88.1-10+deb12u4'],
    ]);
    await until('below reports its new package and zlib1g gone', async () => {
      const h = await held(mesh, 'below');
      return h.join(',') === `curl 7.88.1-10+deb12u4 curl,libssl3 ${FIXED} openssl`;
    });
    assert.not.match(serve.output().slice(before), /whole list/, 'a change on the list held applies as it is');
    // The mesh loses a row behind the host's back: the next change names a base the mesh no longer holds.
    await mesh.store.admin`delete from inventory.node_package where node = 'below' and name = 'curl'`;
    await mesh.store.admin`update inventory.package_state set digest = repeat('0', 64) where node = 'below'`;
    writeStatus(ctx.roots.below!, [
      ['libssl3', FIXED, 'openssl'],
      ['curl', '7.88.1-10+deb12u5'],
    ]);
    await serve.waitFor(/below's package change does not apply to the list the mesh holds/, 20_000, before);
    await until('below sends its whole list, and the mesh holds it as it is', async () => {
      const h = await held(mesh, 'below');
      return h.join(',') === `curl 7.88.1-10+deb12u5 curl,libssl3 ${FIXED} openssl`;
    });
  },
);

A.run();
