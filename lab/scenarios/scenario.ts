// One lab scenario: a name, a sentence saying what it proves, and a run that
// throws (naming what it saw) when the mesh does not do it.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { LabHandle } from '../handle.js';
import { owedBy, type DeclaredRow } from '../mesh_ops.js';

export interface Scenario {
  name: string;
  proves: string;
  run(h: LabHandle, say: (line: string) => void): Promise<void>;
}

/** Add (or replace) a module holding one file and assign it to `node`. Returns the content it carries. */
/** A module of one file assigned to NODE: its content, and the declarations the assignment owed. */
export async function fileModule(
  h: LabHandle,
  module: string,
  node: string,
  path: string,
): Promise<{ content: string; owed: DeclaredRow[] }> {
  const content = `${module} ${randomBytes(6).toString('hex')}\n`;
  const dir = join(h.dir, 'modules');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, `${module}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        name: module,
        resources: [{ kind: 'file', path, content: Buffer.from(content).toString('base64'), mode: '0644' }],
      },
      null,
      2,
    ),
  );
  await h.meshOk(['module', 'add', file]);
  const owed = await owedBy(h, ['assign', module, node]);
  return { content, owed };
}

/** A file's content on a machine, or null when it is not there. */
export async function readOn(h: LabHandle, m: string, path: string): Promise<string | null> {
  const r = await h.run(m, ['/bin/cat', path]);
  return r.code === 0 ? r.stdout : null;
}
