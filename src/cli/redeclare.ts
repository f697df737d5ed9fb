// W2 at the end of every command that changes state: the nodes whose
// composition now differs from what they were last declared are owed a new
// declaration (declareChanged), and the command says which.
import { declareChanged, type Declared } from '../assignment/declare.js';

/** RESULT with the declarations it made owed, for printing and --json. */
export async function redeclare<T extends object>(result: T): Promise<T & { redeclared: Declared[] }> {
  return { ...result, redeclared: await declareChanged() };
}

export const redeclareLine = (d: Declared[]) =>
  d.length ? `re-declaring ${d.map((x) => x.node).join(', ')}` : 'no node\'s composition changed: nothing to re-declare';
