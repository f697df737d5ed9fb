// `npm run docs`: write the generated pages of docs/reference/ (reference.ts
// says what each is made from). The SQL page needs a migrated store: a
// throwaway PostgreSQL of the test harness's is started, migrated and stopped.
//   node dist/test/docs/generate.js [OUT_DIR]   (default docs/reference)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { startPostgres } from '../harness/postgres.js';
import { prepareTemplate } from '../harness/store.js';
import { references } from './reference.js';

const top = fileURLToPath(new URL('../../../', import.meta.url));
const outDir = resolve(process.argv[2] ?? join(top, 'docs/reference'));

const tmp = mkdtempSync(join(tmpdir(), 'mesh-docs-'));
chmodSync(tmp, 0o755); // the postgres user must reach its data dir below
const pg = await startPostgres(join(tmp, 'pg'));
try {
  const admin = postgres(pg.url('postgres'), { max: 1, onnotice: () => {} });
  const db = await prepareTemplate(admin, pg).finally(() => admin.end());
  const sql = postgres(pg.url(db), { max: 1, onnotice: () => {} });
  try {
    mkdirSync(outDir, { recursive: true });
    for (const [name, text] of await references(sql)) {
      writeFileSync(join(outDir, name), text);
      console.log(`wrote ${join(outDir, name)}`);
    }
  } finally {
    await sql.end();
  }
} finally {
  await pg.stop();
  rmSync(tmp, { recursive: true, force: true });
}
