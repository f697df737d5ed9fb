// The line an operator pastes on a new machine: `mesh-host enrol <token>`.
// It carries where the broker is, the fingerprint to pin, the node's name and
// the one-time secret (which is also the node's first broker password).
import { isObject } from './envelope.js';
import { nodeName } from './names.js';

export interface Token { broker: string; fingerprint: string; vhost: string; node: string; user: string; secret: string }

const PREFIX = 'mesh1.';

export function writeToken(t: Token): string {
  return PREFIX + Buffer.from(JSON.stringify({ b: t.broker, f: t.fingerprint, v: t.vhost, n: t.node, u: t.user, s: t.secret })).toString('base64url');
}

export class TokenError extends Error {}

export function readToken(text: string): Token {
  const fail = () => new TokenError('this is not a mesh token: paste the whole line `mesh token issue NAME` printed.');
  if (!text.startsWith(PREFIX) || text.length > 2000) throw fail();
  let v: unknown;
  try { v = JSON.parse(Buffer.from(text.slice(PREFIX.length), 'base64url').toString('utf8')); } catch { throw fail(); }
  if (!isObject(v) || typeof v.b !== 'string' || typeof v.f !== 'string' || typeof v.v !== 'string' || typeof v.s !== 'string' || typeof v.u !== 'string' || v.u.length > 200) throw fail();
  if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(v.b) || !/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/.test(v.f)) throw fail();
  return { broker: v.b, fingerprint: v.f, vhost: v.v, node: nodeName(v.n), user: v.u, secret: v.s };
}
