// Every command's failure is one sentence naming the remedy, and a non-zero exit.
// The cause chain goes to stderr only with MESH_DEBUG set.
export function wrap<A extends unknown[]>(fn: (...args: A) => Promise<unknown> | unknown) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      const e = err as Error;
      process.stderr.write(`mesh: ${e.message}\n`);
      if (process.env.MESH_DEBUG) console.error(e);
      process.exitCode = (e as { exitCode?: number }).exitCode ?? 1;
    }
  };
}
