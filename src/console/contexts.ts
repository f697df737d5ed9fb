// The contexts the console reads, and so the only store URLs it is handed (P1):
// the pages show nodes (inventory), their declarations and rollouts
// (assignment), the overlay, the catalogue's modules and the history (audit).
// Nothing of secret or provision, whose rows hold what a node is given.
import type { Context } from '../store/contexts.js';

export const CONSOLE_CONTEXTS = [
  'inventory',
  'assignment',
  'overlay',
  'catalogue',
  'audit',
] as const satisfies readonly Context[];

export type ConsoleContext = (typeof CONSOLE_CONTEXTS)[number];
