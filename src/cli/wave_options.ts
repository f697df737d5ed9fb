// The options of every command that starts a rollout (mesh rollout start,
// mesh advisories rollout), and what they hand to the rollout: one set, so the
// two commands cannot come to mean different waves.
import type { Sade } from '../sys/program.js';
import type { StartOptions } from '../assignment/rollout.js';

export interface WaveFlags {
  waves?: string;
  'wait-healthy'?: string;
  'max-failing'?: number;
  first?: string;
  json?: boolean;
}

export const waveOptions = (c: Sade): Sade =>
  c
    .option('--waves', 'Nodes reached by the end of each wave', '1,10%,50%,100%')
    .option('--wait-healthy', 'How long a wave may take to report applied: 30s, 2m, 1h', '2m')
    .option('--max-failing', 'Failing nodes tolerated before the rollout halts', 0)
    .option('--first', 'Canary nodes, comma-separated, released first in this order');

export const waveChoice = (o: WaveFlags): StartOptions => ({
  waves: String(o.waves),
  waitHealthy: String(o['wait-healthy']),
  maxFailing: o['max-failing'],
  first: o.first === undefined ? undefined : String(o.first),
});
