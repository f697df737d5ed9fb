// A store URL may list several hosts, as libpq does:
//   postgres://mesh_inventory@db1:5432,db2:5432/mesh?target_session_attrs=read-write
// Every command and every serve then reaches whichever of them is the primary
// (a standby promoted by hand, by Patroni or by pg_auto_failover), and mesh
// needs to know nothing else about the failover.
//
// postgres.js takes such a URL itself, but its `read-write` decides on the
// default_transaction_read_only a server reports at startup, and PostgreSQL 14
// and later report `off` on a hot standby (porsager/postgres#815; the
// library's author moved to `primary`, hapostgres/pg_auto_failover#970). So
// the URL says what libpq and psql understand, and the driver is given
// `primary`, which it decides on in_hot_standby, reported since 14.
import postgres from 'postgres';
import { refuse } from '../sys/errors.js';

export interface StoreHost {
  host: string;
  port: number;
}

export interface StoreTarget {
  hosts: StoreHost[];
  user: string;
  password: string;
  database: string;
  params: URLSearchParams;
}

/** The parts of a store URL, every host of its list. */
export function parseStoreUrl(url: string): StoreTarget {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?]*)@)?([^/?]*)(.*)$/.exec(url.trim());
  if (!m) throw refuse('MSHH3', `${redact(url)} is not a postgres:// URL`);
  const [, scheme, userinfo, hostlist, rest] = m as unknown as [string, string, string | undefined, string, string];
  const first = hostlist.split(',')[0] || 'localhost';
  let u: URL;
  try {
    u = new URL(`${scheme}${userinfo !== undefined ? `${userinfo}@` : ''}${first}${rest}`);
  } catch {
    throw refuse('MSHH3', `${redact(url)} is not a valid URL`);
  }
  const hosts = (hostlist || 'localhost').split(',').map((h) => {
    const hm = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h);
    if (!hm) throw refuse('MSHH4', `${redact(url)} lists a host ${JSON.stringify(h)} that is not HOST or HOST:PORT`);
    return { host: hm[1]!.replace(/^\[|\]$/g, ''), port: hm[2] ? Number(hm[2]) : 5432 };
  });
  return {
    hosts,
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)),
    params: u.searchParams,
  };
}

/** The URL of one host of the list, the rest as it was (for a driver that takes one host: pg, under node-pg-migrate). */
export function hostUrl(url: string, host: StoreHost): string {
  const t = parseStoreUrl(url);
  const u = new URL(`postgres://placeholder/`);
  u.hostname = host.host.includes(':') ? `[${host.host}]` : host.host;
  u.port = String(host.port);
  u.username = encodeURIComponent(t.user);
  u.password = encodeURIComponent(t.password);
  u.pathname = `/${encodeURIComponent(t.database)}`;
  for (const [k, v] of t.params) if (k !== 'target_session_attrs') u.searchParams.set(k, v);
  return u.toString();
}

/**
 * What postgres.js is told to look for. One host: whatever the URL says (nothing, usually).
 * Several: the URL must say read-write (or primary); a list without it would
 * take a standby as readily as the primary, and every write would fail there.
 */
export function driverSessionAttrs(url: string): 'primary' | undefined {
  const t = parseStoreUrl(url);
  const asked = t.params.get('target_session_attrs');
  if (t.hosts.length === 1 && !asked) return undefined;
  if (asked === 'read-write' || asked === 'primary') return 'primary';
  throw refuse(
    'MSHH5',
    `${describeUrl(url)} lists ${t.hosts.length} hosts but says target_session_attrs=${asked ?? '(nothing)'}`,
  );
}

/** host:port[,host:port...]/db of a URL, for messages; never the credentials. */
export function describeUrl(url: string): string {
  try {
    const t = parseStoreUrl(url);
    return `${t.hosts.map((h) => `${h.host}:${h.port}`).join(',')}/${t.database}`;
  } catch {
    return '(an unreadable store URL)';
  }
}

/**
 * The one-host URL of the list's primary, for a driver that takes one host
 * (node-pg-migrate drives pg, which has no host lists). With no primary among
 * them (a failover under way) it fails as a server starting up does (57P03),
 * so waitForStore waits for one.
 */
export async function primaryUrl(url: string): Promise<string> {
  const t = parseStoreUrl(url);
  if (t.hosts.length === 1) return url;
  driverSessionAttrs(url);
  const said: string[] = [];
  for (const h of t.hosts) {
    const one = hostUrl(url, h);
    const sql = postgres(one, { max: 1, onnotice: () => {}, connect_timeout: 10 });
    try {
      const [row] = await sql`select pg_is_in_recovery() as standby`;
      if (!row!.standby) return one;
      said.push(`${h.host}:${h.port} is a standby`);
    } catch (err) {
      said.push(`${h.host}:${h.port}: ${(err as Error).message}`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
  throw Object.assign(new Error(`no primary among ${describeUrl(url)} (${said.join('; ')})`), { code: '57P03' });
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//...@');
}
