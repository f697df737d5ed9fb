// Every wait in a test has a deadline and says what it waited for: a step
// that would otherwise wait for ever (a stream the server never ends, a
// process that never exits) fails at its deadline, naming what did not come,
// rather than hanging until the runner kills the whole file.

/** P, or a rejection after MS naming WHAT; the error P itself gives is kept, prefixed with WHAT. */
export function within<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`)), ms);
  });
  return Promise.race([
    p.catch((err: unknown) => {
      throw new Error(`waiting for ${what}: ${(err as Error).message}`, { cause: err });
    }),
    late,
  ]).finally(() => clearTimeout(t));
}
