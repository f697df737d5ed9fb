// Every fault case prints what was tried and what held, and the suite ends
// with one summary line: cases tried, refused correctly, faults survived,
// messages lost. npm test runs a bounded form (MESH_FAULTS_RUNS), npm run
// faults the full one.
export const RUNS = Number(process.env.MESH_FAULTS_RUNS ?? (process.env.npm_lifecycle_event === 'faults' ? 2000 : 200));

export interface Tally {
  tried: number;
  refused: number;
  survived: number;
  lost: number;
}

export const tally: Tally = { tried: 0, refused: 0, survived: 0, lost: 0 };

export function say(kase: string, what: string): void {
  process.stdout.write(`  case: ${kase}: ${what}\n`);
}

export function summary(name: string): void {
  process.stdout.write(
    `faults (${name}): ${tally.tried} cases tried, ${tally.refused} refused correctly, ${tally.survived} faults survived, ${tally.lost} messages lost\n`,
  );
}
