// `mesh agent add|list`: the mesh-host packages a fleet may be upgraded to
// (V2), kept whole in the catalogue (sql/catalogue/0045) so serve can hand
// them to the nodes over the broker. The version is the package's own
// (dpkg-deb reads its control file), the sha256 is of its exact bytes.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { withStore } from '../store/with_store.js';
import { run } from '../sys/proc.js';
import { refuse } from '../sys/errors.js';
import { CHUNK } from '../wire/agent_package.js';
import { AGENT_VERSION } from '../wire/parse_resources.js';

/** A package's name and version, as its control file says them. */
async function controlOf(file: string): Promise<{ name: string; version: string }> {
  let out: string;
  try {
    out = await run('dpkg-deb', ['--showformat=${Package}\\n${Version}\\n', '-W', file]);
  } catch (err) {
    throw refuse('MSHZ5', `${file} is not a package dpkg-deb can read (${(err as Error).message.split('\n')[0]})`);
  }
  const [name = '', version = ''] = out.split('\n');
  return { name, version };
}

export async function addAgentPackage(file: string) {
  const { name, version } = await controlOf(file);
  if (name !== 'mesh-host' || !AGENT_VERSION.test(version))
    throw refuse(
      'MSHZ5',
      `${file} is the package ${JSON.stringify(name)} at version ${JSON.stringify(version)}: only a mesh-host package, at MAJOR.MINOR.PATCH, upgrades agents`,
    );
  const bytes = readFileSync(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK) chunks.push(bytes.subarray(i, i + CHUNK));
  return withStore('catalogue', (sql) =>
    sql.begin(async (tx) => {
      const [r] =
        await tx`select catalogue.add_agent_package(${version}, ${sha256}, ${bytes.length}, ${chunks.length}) as added`;
      const added = Boolean(r!.added);
      if (added)
        for (const [n, c] of chunks.entries()) await tx`select catalogue.put_agent_chunk(${sha256}, ${n}, ${c})`;
      return { version, sha256, size: bytes.length, added };
    }),
  );
}

export function listAgentPackages() {
  return withStore('catalogue', (sql) =>
    sql`select version, sha256, size, added_at from catalogue.agent_packages order by added_at`.then((rows) =>
      rows.map((r) => ({ ...r, size: Number(r.size) })),
    ),
  );
}
