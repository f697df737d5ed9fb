// `mesh module list`: the catalogue (B2), read from catalogue.module_status,
// the same view a DBA selects from. --refresh first records where each
// source's ref points now; "behind" is then SQL's comparison of recorded facts.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { sourceHead } from './git_head.js';

export interface ModuleRow {
  module: string;
  version: number | null;
  origin: string;
  built_commit: string | null;
  digest: string | null;
  image: string | null;
  built_at: Date | null;
  source: string | null;
  source_ref: string | null;
  source_head: string | null;
  head_seen_at: Date | null;
  behind: boolean | null;
  nodes: string[];
}

export async function moduleList(
  opts: { refresh?: boolean } = {},
): Promise<{ modules: ModuleRow[]; refreshFailed: { module: string; error: string }[] }> {
  const refreshFailed: { module: string; error: string }[] = [];
  return withStore(
    'catalogue',
    async (sql) => {
      if (opts.refresh) {
        const sources = await sql<
          { module: string; git_url: string; ref: string }[]
        >`select module, git_url, ref from catalogue.source order by module`;
        await Promise.all(
          sources.map(async (s) => {
            // The sighting's time is taken before looking, so a build recorded
            // meanwhile with a newer sighting is never overwritten by this one.
            const seenAt = new Date();
            try {
              const head = await sourceHead(s.git_url, s.ref);
              await sql`select catalogue.record_source_head(module_name => ${s.module}::text, commit_sha => ${head}::text, seen_at => ${seenAt}::timestamptz)`;
            } catch (err) {
              refreshFailed.push({ module: s.module, error: (err as Error).message });
            }
          }),
        );
      }
      return { modules: await readModules(sql), refreshFailed };
    },
    { max: 2 },
  );
}

/** The catalogue as mesh module list prints it, on a store already open. */
export async function readModules(sql: Sql): Promise<ModuleRow[]> {
  return [...(await sql<ModuleRow[]>`select * from catalogue.module_status order by module`)];
}

const short = (c: string | null) => (c ? c.slice(0, 12) : '-');

/** One line a person reads: where it came from, and whether that is current. */
export function describe(r: ModuleRow): Record<string, string> {
  const origin =
    r.origin === 'built'
      ? `built from ${short(r.built_commit)}`
      : r.origin === 'handed'
        ? 'handed over'
        : r.origin === 'shipped'
          ? 'shipped'
          : r.origin;
  const state =
    r.behind === true
      ? `behind (source at ${short(r.source_head)})`
      : r.behind === false
        ? 'current'
        : r.origin === 'built' && !r.source_head
          ? 'not known (--refresh)'
          : '-';
  return {
    module: r.module,
    version: r.version === null ? '-' : String(r.version),
    origin,
    state,
    image: r.image && r.digest ? `${r.image}@${r.digest.slice(0, 19)}` : '-',
    runs_on: r.nodes.length ? r.nodes.join(',') : '-',
  };
}
