// pg_dump of a suite's database, as the superuser: what a DBA (or an
// attacker with the disk) would read.
import { run } from '../../src/sys/proc.js';
import { pgBin } from '../harness/postgres.js';
import { servers } from '../harness/servers.js';

export function pgDump(db: string, args: string[] = []): Promise<string> {
  return run(pgBin('pg_dump'), [
    '-h',
    '127.0.0.1',
    '-p',
    String(servers().pg.port),
    '-U',
    'postgres',
    '--no-password',
    ...args,
    '-d',
    db,
  ]);
}

/** A schema dump that says the same thing every run: no versions, no pg_dump session keys, no runs of blank lines. */
export function normaliseSchema(dump: string): string {
  return (
    dump
      .split('\n')
      .filter((l) => !/^-- Dumped (from|by) /.test(l) && !/^\\(un)?restrict /.test(l))
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim() + '\n'
  );
}
