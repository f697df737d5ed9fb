// `mesh backup FILE` and `mesh restore FILE`: the mesh's whole state as one
// file, and that file put back on a freshly installed first node.
//
// One consistent snapshot: a single pg_dump of the whole database (every
// context's schema and rows, the history with its chain, the grants and the
// event trigger that guards the history), taken serializable-deferrable so it
// sees one moment of every context at once. Beside it the signing key (the
// mesh's identity: another key is another mesh, and every node pins this one),
// the broker's definitions of this mesh (src/broker/definitions.ts), and, where
// the bundle's layout holds them, the broker's TLS certificate and key, which
// every node pins by fingerprint.
//
// The file is a tar: manifest.json first (what it is, when, from which mesh
// and versions, and the sha256 and size of every other member), then the
// members. Written 0600 (it holds the signing key and the accounts' hashes),
// under a temporary name in FILE's folder and renamed into place, so FILE is
// the old backup or the new one, never half of one. Restore checks the
// manifest and every checksum before it touches anything; the store's half
// (the dump, and the store made again from it) is src/store/dump.ts, the
// broker's src/inventory/definitions.ts. V3: the restored store may
// be older than what the nodes applied; they say so when they ask for their
// declaration, and serve continues their serials above it
// (assignment.continue_serials), so no node refuses the restored mesh.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { X509Certificate } from 'node:crypto';
import { run, runAny } from '../sys/proc.js';
import { refuse } from '../sys/errors.js';
import { writeAtomic, syncDir } from '../sys/atomic.js';
import { VERSION } from '../sys/version.js';
import { home, readBroker, readSigner, writeBroker } from '../home/home.js';
import { dumpStore, restoreStore } from '../store/dump.js';
import { exportDefinitions, importDefinitions, type MeshDefinitions } from '../inventory/definitions.js';

/** The bundle's broker certificate folder (bundle/layout.ts: STATE/rabbitmq/tls), taken when it exists. */
export const DEFAULT_BROKER_TLS = '/var/lib/mesh/rabbitmq/tls';

const FORMAT = 'mesh-backup';
const MEMBERS = ['store.sql', 'signing.key', 'broker-definitions.json', 'broker.pem', 'broker.key'] as const;
type Member = (typeof MEMBERS)[number];

export interface Manifest {
  format: typeof FORMAT;
  v: 1;
  mesh: string;
  takenAt: string;
  versions: { mesh: string; postgres: string; rabbitmq: string | null };
  vhost: string;
  members: { name: Member; bytes: number; sha256: string }[];
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A folder only this user can enter, removed by the caller. */
const scratch = () => mkdtempSync(join(tmpdir(), 'mesh-backup-'));

export interface BackupResult {
  file: string;
  mesh: string;
  bytes: number;
  sha256: string;
  members: Manifest['members'];
}

export async function backup(file: string, o: { brokerTls?: string } = {}): Promise<BackupResult> {
  const target = resolve(file);
  if (!statSync(dirname(target), { throwIfNoEntry: false })?.isDirectory())
    throw refuse('MSHR5', `${dirname(target)} is not a folder`, 'name a FILE in a folder that exists');
  const signer = readSigner();
  const broker = readBroker();
  const dir = scratch();
  try {
    const pgVersion = await dumpStore(join(dir, 'store.sql'), dir);
    writeFileSync(join(dir, 'signing.key'), readFileSync(join(home(), 'signing.key')), { mode: 0o600 });
    const defs = await exportDefinitions(broker);
    writeFileSync(join(dir, 'broker-definitions.json'), JSON.stringify(defs, null, 1), { mode: 0o600 });
    const names: Member[] = ['store.sql', 'signing.key', 'broker-definitions.json'];
    const tls = o.brokerTls ?? DEFAULT_BROKER_TLS;
    for (const m of ['broker.pem', 'broker.key'] as const) {
      const from = join(tls, m);
      if (!existsSync(from)) continue;
      writeFileSync(join(dir, m), readFileSync(from), { mode: 0o600 });
      names.push(m);
    }
    const manifest: Manifest = {
      format: FORMAT,
      v: 1,
      mesh: signer.mesh,
      takenAt: new Date().toISOString(),
      versions: { mesh: VERSION, postgres: pgVersion, rabbitmq: defs.rabbit_version ?? null },
      vhost: broker.vhost,
      members: names.map((name) => {
        const b = readFileSync(join(dir, name));
        return { name, bytes: b.length, sha256: sha256(b) };
      }),
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    // Made 0600 empty first, then filled by tar: never readable by others, not even half written.
    const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
    await (await open(tmp, 'w', 0o600)).close();
    try {
      await run('tar', [
        '--create',
        '--file',
        tmp,
        '--directory',
        dir,
        '--owner=0',
        '--group=0',
        'manifest.json',
        ...names,
      ]);
      const fh = await open(tmp, 'r+');
      await fh.chmod(0o600);
      await fh.sync();
      await fh.close();
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
    await syncDir(dirname(target));
    const bytes = readFileSync(target);
    return { file: target, mesh: signer.mesh, bytes: bytes.length, sha256: sha256(bytes), members: manifest.members };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The manifest and members of FILE, every checksum held to the manifest; refused before anything is touched. */
export async function readBackup(file: string, dir: string): Promise<Manifest> {
  const notOne = (why: string) =>
    refuse('MSHR1', `${file} is not a mesh backup (${why})`, 'name a file `mesh backup` wrote');
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) throw notOne('there is no such file');
  const listed = await runAny('tar', ['--list', '--file', file]);
  if (listed.code !== 0) throw notOne('not a tar archive');
  const names = listed.stdout.split('\n').filter(Boolean);
  const strange = names.filter((n) => n !== 'manifest.json' && !(MEMBERS as readonly string[]).includes(n));
  if (strange.length) throw notOne(`it holds ${strange.slice(0, 3).join(', ')}`);
  if (!names.includes('manifest.json')) throw notOne('no manifest.json');
  await run('tar', ['--extract', '--file', file, '--directory', dir, '--no-same-owner', '--no-same-permissions']);
  let m: Manifest;
  try {
    m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch (err) {
    throw notOne(`its manifest is not JSON: ${(err as Error).message.slice(0, 80)}`);
  }
  if (m?.format !== FORMAT || m.v !== 1 || !Array.isArray(m.members)) throw notOne('its manifest is not of one');
  for (const need of ['store.sql', 'signing.key', 'broker-definitions.json'])
    if (!m.members.some((x) => x.name === need)) throw notOne(`its manifest lists no ${need}`);
  for (const x of m.members) {
    const at = join(dir, basename(String(x.name)));
    if (!(MEMBERS as readonly string[]).includes(x.name) || !existsSync(at))
      throw notOne(`${String(x.name)} is listed and missing`);
    const got = sha256(readFileSync(at));
    if (got !== x.sha256)
      throw refuse(
        'MSHR2',
        `${file} is damaged: ${x.name} has sha256 ${got.slice(0, 16)}..., the manifest says ${String(x.sha256).slice(0, 16)}...`,
        'nothing was restored; restore from another copy of the backup',
      );
  }
  return m;
}

export interface RestoreResult {
  file: string;
  mesh: string;
  takenAt: string;
  migrated: string[];
  brokerAccounts: number;
  brokerTls: boolean;
}

export async function restore(file: string, o: { force?: boolean; brokerTls?: string } = {}): Promise<RestoreResult> {
  const from = resolve(file);
  const dir = scratch();
  try {
    const m = await readBackup(from, dir);
    // Every context's schema made again from the dump, in one transaction, and migrated to this version.
    const migrated = await restoreStore(join(dir, 'store.sql'), dir, o.force);
    // The mesh's identity: the fresh install's own key signed nothing any node knows.
    const keyPath = join(home(), 'signing.key');
    const owner = statSync(keyPath, { throwIfNoEntry: false });
    await writeAtomic(
      keyPath,
      readFileSync(join(dir, 'signing.key')),
      0o600,
      owner ? { uid: owner.uid, gid: owner.gid } : undefined,
    );
    const broker = readBroker();
    const defs = JSON.parse(readFileSync(join(dir, 'broker-definitions.json'), 'utf8')) as MeshDefinitions;
    const imported = await importDefinitions(broker, defs);
    // The certificate every node pins: put back where the bundle's broker reads it, and named in broker.json.
    let brokerTls = false;
    const tls = o.brokerTls ?? DEFAULT_BROKER_TLS;
    if (m.members.some((x) => x.name === 'broker.pem') && existsSync(tls)) {
      for (const [name, mode] of [
        ['broker.key', 0o600],
        ['broker.pem', 0o644],
      ] as const) {
        const at = join(tls, name);
        const was = statSync(at, { throwIfNoEntry: false });
        await writeAtomic(at, readFileSync(join(dir, name)), mode, was ? { uid: was.uid, gid: was.gid } : undefined);
      }
      const fp = new X509Certificate(readFileSync(join(dir, 'broker.pem'))).fingerprint256;
      await writeBroker({ ...broker, fingerprint: fp });
      brokerTls = true;
    }
    return {
      file: from,
      mesh: m.mesh,
      takenAt: m.takenAt,
      migrated,
      brokerAccounts: imported.users,
      brokerTls,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
