// Invariant ids (E1, D2, W1 ...: docs/design.md defines each) as they are
// found in text. An id is a capital letter and a number from 1 to 99 standing
// alone as a word: not inside a word (SIGUSR1, X25519, MSHM0); not after a
// hyphen, where it ends a range of something else (the character class A-Z0-9,
// the codes MSHM0-M7); not joined by a colon to a neighbour, as the pairs of a
// hex fingerprint are (3A:9F:C1). Ids start at 1, so T0 (a moment) is none.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ID = /(?<![\w:-])[A-Z][1-9][0-9]?\b(?!:\w)/g;

/** Tokens of that form that are not ids, each with why. Keep this short. */
export const NOT_IDS: Record<string, string> = {
  V8: "the JavaScript engine, named where a bench reports node's heap",
};

/** Every id in TEXT. */
export function idsIn(text: string): string[] {
  return [...text.matchAll(ID)].map((m) => m[0]).filter((t) => !(t in NOT_IDS));
}

/** The ids docs/design.md defines: each by a heading line of the exact form `### E1: short title`. */
export function definedIds(design: string): Set<string> {
  return new Set([...design.matchAll(/^### ([A-Z][1-9][0-9]?): \S/gm)].map((m) => m[1]!));
}

/** Files under DIRS of ROOT, as paths relative to ROOT; what is built or installed left out. */
export function filesUnder(root: string, dirs: string[], keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(root, dir))) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (keep(path)) out.push(path);
    }
  };
  for (const d of dirs) walk(d);
  return out.sort();
}

/** Where each id not in DEFINED is used: id -> the first few `file:line`s. */
export function undefinedIds(root: string, files: string[], defined: Set<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of files) {
    readFileSync(join(root, f), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const id of idsIn(line)) {
          if (defined.has(id)) continue;
          const at = out.get(id) ?? [];
          if (at.length < 3) at.push(`${relative(root, join(root, f))}:${i + 1}`);
          out.set(id, at);
        }
      });
  }
  return out;
}
