// The files of the Debian packages that say what the first node's say: the
// mesh-host unit (the same Spec, hardened the same way) and the commands on
// PATH, for the tree installed at LIB (/usr/lib/mesh). bundle/deb/build.sh
// writes them with the packaged runtime:
//   node dist/bundle/deb/files.js unit|mesh-host|mesh LIB
import { agentSpec, wrapperScript } from '../control.js';
import { unitText } from '../units.js';
import { DEFAULT_HOST_DIR, DEFAULT_ROOTS } from '../layout.js';

const PACKAGED =
  'Shipped by the mesh-host package: override it with systemctl edit mesh-host, never by editing it here.';

/** What the package's agent runs with: the defaults the first node's installer gives its own. */
const AGENT_ENV = { MESH_HOST_DIR: DEFAULT_HOST_DIR, MESH_HOST_ROOTS: DEFAULT_ROOTS };

export function packagedFile(what: string, lib: string): string {
  const node = `${lib}/node/bin/node`;
  const hostJs = `${lib}/dist/host/cli.js`;
  switch (what) {
    case 'unit':
      return unitText(agentSpec(AGENT_ENV, [node, hostJs]), PACKAGED);
    case 'mesh-host':
      return wrapperScript(
        AGENT_ENV,
        hostJs,
        node,
        'mesh-host from the mesh-host package: the folder and roots its unit runs with.',
      );
    case 'mesh':
      // On the first node the installer writes STATE/bin/mesh with that node's store and home: that one is
      // the operator's mesh there. Elsewhere MESH_HOME and MESH_STORE_* come from the environment as given.
      return [
        '#!/bin/sh',
        "# mesh from the mesh package: the first node's own command (the installer writes it) where there is one.",
        '[ -x /var/lib/mesh/bin/mesh ] && exec /var/lib/mesh/bin/mesh "$@"',
        `exec '${node}' '${lib}/dist/src/cli/mesh.js' "$@"`,
        '',
      ].join('\n');
    default:
      throw new Error(`files.js: unknown file ${JSON.stringify(what)} (unit, mesh-host, mesh)`);
  }
}

const [what, lib] = process.argv.slice(2);
if (!what || !lib) {
  process.stderr.write('usage: files.js unit|mesh-host|mesh LIB\n');
  process.exit(2);
}
process.stdout.write(packagedFile(what, lib));
