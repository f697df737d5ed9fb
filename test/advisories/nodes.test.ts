// The packages real hosts report, joined to an OSV advisory loaded from a
// file: three hosts share this machine, so each reads its own dpkg status
// (MESH_HOST_DPKG_ROOT), one below the fixed version, one at it, one above.
// Only the one below is listed. A host sends its list whole once, then its
// changes; a change the mesh cannot apply to the list it holds makes serve
// ask for the whole list again, and the list comes out right.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
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

A.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.roots = {};
  for (const [node, version] of Object.entries(AT)) {
    const root = mkdtempSync(join(tmpdir(), `mesh-dpkg-${node}-`));
    writeStatus(root, [
      ['libssl3', version, 'openssl'],
      ['zlib1g', '1:1.2.13.dfsg-1'],
    ]);
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

A(
  'a package changed by hand goes out as a change; a change the mesh cannot apply brings the whole list',
  async (ctx) => {
    const { mesh, serve } = ctx;
    const before = serve.output().length;
    writeStatus(ctx.roots.below!, [
      ['libssl3', FIXED, 'openssl'],
      ['curl', '7.88.1-10+deb12u4'],
    ]);
    await until('below reports its upgrade and its new package', async () => {
      const h = await held(mesh, 'below');
      return h.join(',') === `curl 7.88.1-10+deb12u4 curl,libssl3 ${FIXED} openssl`;
    });
    assert.equal(JSON.parse(await cli(mesh, 'advisories', '--json')), [], 'nothing affected once it is fixed');
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
