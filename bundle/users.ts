// The users the first node's daemons run as, and the files each owns (P1).
// serve's user (mesh) alone reads MESH_HOME -- the signing key every node
// obeys, broker.json with the broker's admin password -- and the URLs of the
// contexts serve works in. The broker's user reads its own folder (its
// config, TLS key, Erlang cookie, data) and nothing of the mesh's. The
// console's user reads its own copies of its contexts' URLs and nothing else.
// Root (the operator's `mesh`, the installer, mesh-host) reads everything.
import { lchownSync, lstatSync, readFileSync, readdirSync, mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { run, runAny } from '../src/sys/proc.js';
import { writeAtomic } from '../src/sys/atomic.js';
import { resolveOwner } from '../host/apply/owner.js';
import { refuse } from '../src/sys/errors.js';
import { SERVE_CONTEXTS } from '../src/serve/context.js';
import { CONSOLE_CONTEXTS } from '../src/console/contexts.js';
import { readerRole, storeRole } from '../src/store/contexts.js';
import { superuser, DB } from './postgres.js';
import { paths, type Options, type Users } from './layout.js';

/** The highest uid of a system user: SYS_UID_MAX of /etc/login.defs, 999 where it is not set. */
function systemUidMax(): number {
  let defs = '';
  try {
    defs = readFileSync('/etc/login.defs', 'utf8');
  } catch {
    /* none: the default */
  }
  const m = /^\s*SYS_UID_MAX\s+(\d+)/m.exec(defs);
  return m ? Number(m[1]) : 999;
}

/**
 * A system user and group of each name, no home, no shell, unless it exists.
 * One that exists as root or a login account is refused: the signing key
 * would be handed to whoever uses that account. Returns what was made.
 */
export async function ensureUsers(u: Users): Promise<string[]> {
  const made: string[] = [];
  for (const name of [u.serve, u.console, u.broker]) {
    const id = await runAny('id', ['-u', '--', name]);
    if (id.code === 0) {
      const uid = Number(id.stdout.trim());
      if (uid === 0 || uid > systemUidMax())
        throw refuse(
          'MSHT0',
          `user ${name} already exists and is not a system user (uid ${uid}); a daemon of the first node runs as ${name}`,
        );
      continue;
    }
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      name,
    ]);
    made.push(`user ${name}`);
  }
  return made;
}

/** `path` (and, with tree, all below it) owned by `user` and its group; symbolic links themselves, never followed. True when one changed. */
async function own(path: string, user: string, tree = false): Promise<boolean> {
  const { uid, gid } = await resolveOwner(user);
  let changed = false;
  const walk = (p: string) => {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.uid !== uid || st.gid !== gid) {
      lchownSync(p, uid, gid);
      changed = true;
    }
    if (tree && st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(path);
  return changed;
}

/** MESH_HOME and the signing key: serve's user's alone. Returns what changed. */
export async function ownHome(o: Options): Promise<string[]> {
  if (!o.users) return [];
  const user = o.users.serve;
  const a = await own(o.home, user);
  const b = await own(join(o.home, 'signing.key'), user);
  return a || b ? [`${o.home} and its signing key owned by ${user}`] : [];
}

/**
 * The store's URL files: serve's contexts' owned by serve's user (the folder
 * too, so it reaches them); audit's stays root's. Returns what changed.
 */
export async function ownStore(o: Options): Promise<string[]> {
  if (!o.users) return [];
  const p = paths(o);
  const user = o.users.serve;
  let changed = await own(p.store, user);
  for (const ctx of SERVE_CONTEXTS) changed = (await own(p.storeFile(ctx), user)) || changed;
  return changed ? [`serve's store URLs owned by ${user}`] : [];
}

/**
 * The console's own URLs (0600, its user's, in a 0700 folder of its own),
 * each logging in as its context's reader (P1): SELECT on what it shows, and
 * of writes only signing in and out. Audit's reader is the one every reader
 * of the history uses, so its URL is a copy of the store's; the others get a
 * password of their own, set when the file does not yet name the reader.
 * Written when the console runs; returns what changed.
 */
export async function ensureConsoleStore(o: Options): Promise<string[]> {
  if (!o.console) return [];
  const p = paths(o);
  const owner = await resolveOwner(o.users?.console);
  mkdirSync(p.consoleStore, { recursive: true, mode: 0o700 });
  chmodSync(p.consoleStore, 0o700);
  let changed = o.users ? await own(p.consoleStore, o.users.console) : false;
  let sql: Awaited<ReturnType<typeof superuser>> | undefined;
  try {
    for (const ctx of CONSOLE_CONTEXTS) {
      const role = readerRole(ctx);
      const file = p.consoleStoreFile(ctx);
      const st = lstatSync(file, { throwIfNoEntry: false });
      const had = st ? readFileSync(file, 'utf8') : undefined;
      let url: string;
      if (storeRole(ctx) === role) url = readFileSync(p.storeFile(ctx), 'utf8');
      else if (had?.startsWith(`postgres://${role}:`)) url = had;
      else {
        // Set first, written second: a crash between them makes a new one next run.
        const password = randomBytes(24).toString('base64url');
        sql ??= await superuser(o, DB);
        await sql.unsafe(`alter role "${role}" password '${password}'`);
        url = `postgres://${role}:${password}@127.0.0.1:${o.ports.pg}/${DB}\n`;
      }
      if (had === url && st!.uid === owner.uid && st!.gid === owner.gid && (st!.mode & 0o777) === 0o600) continue;
      await writeAtomic(file, url, 0o600, owner);
      changed = true;
    }
  } finally {
    await sql?.end();
  }
  return changed ? [`the console's store URLs as its readers (${CONSOLE_CONTEXTS.join(', ')})`] : [];
}

/**
 * The broker's folder, TLS key and what RabbitMQ writes itself (its data,
 * logs, Erlang cookie): the broker's user's. Its config is a carried file
 * with that owner; the installer's own files there (the admin password, a
 * hand-over file) stay root's. Returns what changed.
 */
export async function ownBroker(o: Options): Promise<string[]> {
  if (!o.users) return [];
  const p = paths(o);
  const user = o.users.broker;
  let changed = false;
  for (const path of [p.rabbit, p.tls, join(p.tls, 'broker.key'), join(p.tls, 'broker.pem')])
    changed = (await own(path, user)) || changed;
  for (const name of ['mnesia', 'log', '.erlang.cookie', 'rabbit.pid', 'erl_crash.dump'])
    changed = (await own(join(p.rabbit, name), user, true)) || changed;
  return changed ? [`the broker's folder owned by ${user}`] : [];
}
