// `mesh store promote`: the standby becomes the primary. PostgreSQL's own
// `pg_ctl promote`, run on the standby's machine as its postgres user, not
// `select pg_promote()`: that needs a superuser connection to the standby
// (no context role holds one, nor should), where pg_ctl needs only the data
// directory and the right to be postgres there. It waits until the server
// accepts writes. mesh decides nothing here: whoever promotes (an operator,
// Patroni, pg_auto_failover) must first be sure the old primary is down and
// stays down; every mesh program then finds the new one in its host list.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../sys/proc.js';
import { refuse } from '../sys/errors.js';

/** The bundle's cluster (bundle/layout.ts: STATE/postgres/data). */
export const DEFAULT_PG_DATA = '/var/lib/mesh/postgres/data';

/** A server binary of the newest PostgreSQL installed. */
export function pgBin(name: string): string {
  const versions = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
    : [];
  for (const v of versions) {
    const p = `/usr/lib/postgresql/${v}/bin/${name}`;
    if (existsSync(p)) return p;
  }
  throw new Error(
    'no PostgreSQL server binaries in /usr/lib/postgresql: apt-get install -y --no-install-recommends postgresql.',
  );
}

export async function promote(opts: { data?: string } = {}): Promise<{ data: string; promoted: true }> {
  const data = opts.data ?? DEFAULT_PG_DATA;
  if (!existsSync(join(data, 'PG_VERSION'))) throw refuse('MSHE0', `${data} holds no PostgreSQL cluster`);
  if (!existsSync(join(data, 'standby.signal'))) throw refuse('MSHE1', `${data} is not a standby (no standby.signal)`);
  // postgres refuses to run as root; as root, pg_ctl runs as the cluster's owner.
  const argv = [pgBin('pg_ctl'), 'promote', '-D', data, '-w', '-t', '120'];
  const [cmd, args] =
    process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', ...argv]] : [argv[0]!, argv.slice(1)];
  await run(cmd, args, { timeoutMs: 130_000 });
  return { data, promoted: true };
}
