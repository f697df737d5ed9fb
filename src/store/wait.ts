// M3: the store waits for the database on a cold machine. Three minutes, not
// one: initdb on a cold first node took longer than sixty seconds, and a wait
// that a second run always fixes is the worst kind of flake.
import { describeUrl } from './locate.js';
import { refuse } from '../sys/errors.js';

export const DEFAULT_WAIT_SECONDS = 180;

// Errors that mean "not yet" rather than "never": refused, no socket, starting up.
const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P03',
  'CONNECT_TIMEOUT',
]);

export class StoreUnreachable extends Error {}

export function waitLimit(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.MESH_STORE_WAIT_SECONDS;
  if (v === undefined || v === '') return DEFAULT_WAIT_SECONDS;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0)
    throw refuse('MSHE2', `MESH_STORE_WAIT_SECONDS must be a number of seconds, not ${JSON.stringify(v)}`);
  return n;
}

/** Run `attempt` until it connects, saying what it waits for, up to the limit. */
export async function waitForStore<T>(
  url: string,
  attempt: () => Promise<T>,
  say: (line: string) => void = (l) => process.stderr.write(l + '\n'),
  limitSeconds = waitLimit(),
): Promise<T> {
  const started = Date.now();
  let lastSaid = -Infinity;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      const waited = (Date.now() - started) / 1000;
      if (!TRANSIENT.has(code)) throw err;
      if (waited >= limitSeconds) {
        throw new StoreUnreachable(
          `the database at ${describeUrl(url)} did not answer within ${limitSeconds}s (${code}): ` +
            `start PostgreSQL there, or point the MESH_STORE_* variables at one that runs.`,
          { cause: err },
        );
      }
      if (waited - lastSaid >= 10) {
        say(`waiting for the database at ${describeUrl(url)} (${code}), ${Math.floor(waited)}s of ${limitSeconds}s`);
        lastSaid = waited;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
