// mesh-host packages made cheaply for the upgrade tests (V2): this
// checkout's agent under usr/lib/mesh with another version in its
// package.json, its dependencies linked rather than copied. BROKEN: an agent
// that ends as it starts. EMPTY: a package with no agent at all.
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/sys/proc.js';

const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url));

export async function makePackage(
  work: string,
  version: string,
  opts: { broken?: boolean; empty?: boolean; note?: string } = {},
): Promise<string> {
  const stage = mkdtempSync(join(work, 'stage-'));
  mkdirSync(join(stage, 'DEBIAN'));
  writeFileSync(
    join(stage, 'DEBIAN', 'control'),
    `Package: mesh-host\nVersion: ${version}\nArchitecture: all\nMaintainer: mesh tests <tests@mesh.invalid>\nDescription: the mesh agent, for the upgrade tests${opts.note ?? ''}\n`,
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
  const deb = join(mkdtempSync(join(work, 'deb-')), `mesh-host_${version}_all.deb`);
  await run('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '--build', stage, deb]);
  return deb;
}
