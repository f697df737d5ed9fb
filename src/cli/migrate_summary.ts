import { migrate } from '../store/migrate.js';

export async function migrateCommand(): Promise<string> {
  const results = await migrate({ say: (l) => process.stderr.write(l + '\n') });
  const ran = results.flatMap((r) => r.ran.map((n) => `${r.context}/${n}`));
  return ran.length === 0 ? 'already up to date' : `applied ${ran.length}: ${ran.join(', ')}`;
}
