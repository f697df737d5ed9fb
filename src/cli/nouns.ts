// The CLI's nouns: each file and the first words of its commands. A command
// line whose first word is one of these loads that noun's file alone:
// importing all fifteen (and what each imports) at every start would be a
// large part of every command's own start. Anything else (--help, a typo, an
// alias) loads them all, so sade sees every command. test/cli/lazy_nouns
// checks these words against what each file really registers.
import type { Program } from '../sys/program.js';

type Register = (p: Program) => void;

export const NOUNS: { noun: string; words: string[]; load: () => Promise<Register> }[] = [
  {
    noun: 'control plane',
    words: ['init', 'migrate', 'store', 'serve'],
    load: async () => (await import('./control.js')).registerControl,
  },
  { noun: 'token', words: ['token'], load: async () => (await import('./token.js')).registerToken },
  { noun: 'node', words: ['node'], load: async () => (await import('./node.js')).registerNode },
  { noun: 'module', words: ['module'], load: async () => (await import('./module.js')).registerModule },
  {
    noun: 'declaration',
    words: ['assign', 'unassign', 'plan', 'freshness', 'declare', 'outbox'],
    load: async () => (await import('./declaration.js')).registerDeclaration,
  },
  { noun: 'build', words: ['build', 'builder'], load: async () => (await import('./build.js')).registerBuild },
  { noun: 'overlay', words: ['overlay'], load: async () => (await import('./overlay.js')).registerOverlay },
  { noun: 'secret', words: ['secret'], load: async () => (await import('./secret.js')).registerSecret },
  { noun: 'provision', words: ['provision'], load: async () => (await import('./provision.js')).registerProvision },
  { noun: 'firewall', words: ['firewall'], load: async () => (await import('./firewall.js')).registerFirewall },
  { noun: 'audit', words: ['log', 'audit'], load: async () => (await import('./audit.js')).registerAudit },
  { noun: 'drift', words: ['drift'], load: async () => (await import('./drift.js')).registerDrift },
  { noun: 'console', words: ['console'], load: async () => (await import('./console.js')).registerConsole },
  { noun: 'rollout', words: ['rollout'], load: async () => (await import('./rollout.js')).registerRollout },
  { noun: 'broker', words: ['broker'], load: async () => (await import('./broker.js')).registerBroker },
];

/** The nouns a command line needs: the one its first word names, else every one. */
export function nounsFor(argv: string[]): typeof NOUNS {
  const first = argv.find((a) => !a.startsWith('-'));
  const mine = NOUNS.filter((n) => first !== undefined && n.words.includes(first));
  return mine.length ? mine : NOUNS;
}
