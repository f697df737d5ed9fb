// The `mesh` program: its description and the commands of the nouns a command
// line needs (nouns.ts), registered and not yet run. mesh.ts runs it; the CLI
// reference (docs/reference/cli.md) is generated from it with every noun.
import { program, type Program } from '../sys/program.js';
import { nounsFor } from './nouns.js';

export const MESH_DESCRIBE =
  "Run a fleet of machines from one declared truth. Every command reads its store from MESH_STORE_<CONTEXT> and the control plane's files from MESH_HOME (default /etc/mesh).";

/** `mesh` with the nouns ARGV names (every noun for no command, --help or a typo). */
export async function meshProgram(argv: string[]): Promise<Program> {
  const p = program('mesh', MESH_DESCRIBE);
  const nouns = nounsFor(argv);
  const registers = await Promise.all(nouns.map((n) => n.load()));
  nouns.forEach((n, i) => p.noun(n.noun, registers[i]!));
  return p;
}
