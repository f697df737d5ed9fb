// The CLI's nouns, in the order --help lists them: each file and the noun its
// commands are listed under. A command line whose first word is a command of
// one file loads that file alone: importing all fifteen (and what each
// imports) at every start would be a large part of every command's own start.
// Which words a file answers to is read from the commands it registers (their
// `.command('WORD ...')` lines), so the registrations stay the one table of
// commands. Anything else (--help, a typo, an alias) loads them all, so sade
// sees every command.
import { readFileSync } from 'node:fs';
import type { Program } from '../sys/program.js';

type Register = (p: Program) => void;

const FILES: [noun: string, file: string][] = [
  ['control plane', 'control'],
  ['token', 'token'],
  ['node', 'node'],
  ['module', 'module'],
  ['declaration', 'declaration'],
  ['build', 'build'],
  ['overlay', 'overlay'],
  ['secret', 'secret'],
  ['provision', 'provision'],
  ['firewall', 'firewall'],
  ['audit', 'audit'],
  ['drift', 'drift'],
  ['console', 'console'],
  ['rollout', 'rollout'],
  ['promise', 'promise'],
  ['history', 'history'],
  ['freeze', 'freeze'],
  ['broker', 'broker'],
  ['agent', 'agent'],
  ['advisories', 'advisories'],
];

/** The first words of the commands FILE registers, read from its compiled text (beside this file). */
function wordsOf(file: string): string[] {
  const text = readFileSync(new URL(`./${file}.js`, import.meta.url), 'utf8');
  return [...new Set([...text.matchAll(/\.command\(\s*'([a-z][a-z-]*)/g)].map((m) => m[1]!))];
}

/** The one function FILE exports to register its commands. */
async function registerOf(file: string): Promise<Register> {
  const m = (await import(`./${file}.js`)) as Record<string, unknown>;
  const fns = Object.entries(m).filter(([k, v]) => k.startsWith('register') && typeof v === 'function');
  if (fns.length !== 1) throw new Error(`src/cli/${file}.ts must export one register function, not ${fns.length}`);
  return fns[0]![1] as Register;
}

export interface Noun {
  noun: string;
  file: string;
  words: string[];
  load: () => Promise<Register>;
}

export const NOUNS: Noun[] = FILES.map(([noun, file]) => ({
  noun,
  file,
  get words() {
    return wordsOf(file);
  },
  load: () => registerOf(file),
}));

/** The nouns a command line needs: the one its first word names, else every one. */
export function nounsFor(argv: string[]): Noun[] {
  const first = argv.find((a) => !a.startsWith('-'));
  const mine = first === undefined ? [] : NOUNS.filter((n) => n.words.includes(first));
  return mine.length ? mine : NOUNS;
}
