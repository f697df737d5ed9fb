// What an operator hands a new machine on its standard input
// (`... | mesh-host enrol`, never on a command line: E7). It carries where the
// brokers are, the fingerprint to pin at each, the node's name, the one-time
// secret (which is also the node's first broker password) and `k`, the sha256
// of the mesh's signing key: the host keeps only a welcome naming that key
// (E6), so whoever can publish to its queue cannot become its mesh. `b` and
// `f` are the first broker, as every token had them before there were several
// (an older mesh-host reads them and nothing else); `bs` lists every broker,
// the first among them, when there is more than one.
import { createHash } from 'node:crypto';
import { isObject } from './envelope.js';
import { refuse } from '../sys/errors.js';
import { nodeName, isHostPort, isFingerprint, NODE_NAME } from './names.js';

export interface TokenBroker {
  address: string;
  fingerprint: string;
}

export interface Token {
  /** The first broker: the one an older mesh-host dials. */
  broker: string;
  fingerprint: string;
  /** Every broker, tried in turn; the first is `broker`. */
  brokers: TokenBroker[];
  vhost: string;
  node: string;
  user: string;
  secret: string;
  /** The sha256 of the mesh's signing key (its 32 public bytes), lower-case hex: the only key a welcome may name. */
  pin: string;
}

const PREFIX = 'mesh1.';
/** Several brokers with their fingerprints fit; an older reader stops at 2,000 characters, which three brokers stay well under. */
const MAX = 8000;

const PIN = /^[0-9a-f]{64}$/;

/** The pin of a signing key: the sha256 of its 32 public bytes, as the token carries it. */
export function pinOf(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex');
}

/** `brokers`, when it names more than one, must start with `broker` and `fingerprint`. */
export function writeToken(t: Omit<Token, 'brokers'> & { brokers?: TokenBroker[] }): string {
  const several = t.brokers && t.brokers.length > 1 ? t.brokers : undefined;
  return (
    PREFIX +
    Buffer.from(
      JSON.stringify({
        b: t.broker,
        f: t.fingerprint,
        v: t.vhost,
        n: t.node,
        u: t.user,
        s: t.secret,
        k: t.pin,
        ...(several ? { bs: several.map((b) => ({ a: b.address, f: b.fingerprint })) } : {}),
      }),
    ).toString('base64url')
  );
}

export function readToken(text: string): Token {
  const fail = () =>
    refuse(
      'MSHF3',
      'this is not a mesh token',
      'give the whole token `mesh token issue NAME` printed, on standard input',
    );
  if (!text.startsWith(PREFIX) || text.length > MAX) throw fail();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw fail();
  }
  if (
    !isObject(v) ||
    typeof v.b !== 'string' ||
    typeof v.f !== 'string' ||
    typeof v.v !== 'string' ||
    typeof v.s !== 'string' ||
    typeof v.u !== 'string' ||
    v.u.length > 200
  )
    throw fail();
  if (!isHostPort(v.b) || !isFingerprint(v.f)) throw fail();
  // A token without the pin would let the first answer on the queue name the mesh's key: refused, not trusted.
  if (v.k === undefined)
    throw refuse(
      'MSHU1',
      "this token does not name the mesh's signing key (it was issued by an older mesh)",
      `issue a new one on the control plane: mesh token issue ${typeof v.n === 'string' && NODE_NAME.test(v.n) ? v.n : 'NAME'}`,
    );
  if (typeof v.k !== 'string' || !PIN.test(v.k)) throw fail();
  let brokers: TokenBroker[] = [{ address: v.b, fingerprint: v.f }];
  if (v.bs !== undefined) {
    if (!Array.isArray(v.bs) || v.bs.length === 0 || v.bs.length > 64) throw fail();
    brokers = v.bs.map((x: unknown) => {
      if (!isObject(x) || typeof x.a !== 'string' || typeof x.f !== 'string' || !isHostPort(x.a) || !isFingerprint(x.f))
        throw fail();
      return { address: x.a, fingerprint: x.f };
    });
    // The first of the list is the one an older reader dials: one broker, said once.
    if (brokers[0]!.address !== v.b || brokers[0]!.fingerprint !== v.f) throw fail();
  }
  return { broker: v.b, fingerprint: v.f, brokers, vhost: v.v, node: nodeName(v.n), user: v.u, secret: v.s, pin: v.k };
}
