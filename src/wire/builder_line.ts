// The line an operator hands a build machine on stdin: `echo LINE | mesh-builder enrol`.
// It carries where the broker is, the fingerprint to pin, the builder's
// account and password, and the one account whose requests it may build (the
// control plane's). It is a credential: printed once, kept by nobody but the
// builder, which saves it 0600 and never needs it on a command line again.
import { isObject, parseJson, WireError } from './envelope.js';
import { PASSWORD } from './enrol.js';
import { refuse } from '../sys/errors.js';
import { nodeName, isHostPort, isFingerprint } from './names.js';

export interface EnrolLine {
  broker: string;
  fingerprint: string;
  vhost: string;
  name: string;
  user: string;
  password: string;
  /** The control plane's account: the only user_id a build request may carry. */
  requester: string;
}

const PREFIX = 'meshb1.';

export function writeEnrolLine(l: EnrolLine): string {
  return (
    PREFIX +
    Buffer.from(
      JSON.stringify({
        b: l.broker,
        f: l.fingerprint,
        v: l.vhost,
        n: l.name,
        u: l.user,
        s: l.password,
        r: l.requester,
      }),
    ).toString('base64url')
  );
}

export function readEnrolLine(text: string): EnrolLine {
  const fail = () => refuse('MSHP0', 'this is not a builder enrolment line');
  const t = text.trim();
  if (!t.startsWith(PREFIX) || t.length > 2000) throw fail();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(t.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw fail();
  }
  if (!isObject(v)) throw fail();
  const s = (k: string, max = 200) => {
    const x = v[k];
    if (typeof x !== 'string' || x.length === 0 || x.length > max) throw fail();
    return x;
  };
  const l = {
    broker: s('b'),
    fingerprint: s('f'),
    vhost: s('v'),
    name: s('n'),
    user: s('u'),
    password: s('s'),
    requester: s('r'),
  };
  // A port over 65535 passes the pattern: refused here, not later as an uncoded HOST:PORT fault.
  if (!isHostPort(l.broker) || !isFingerprint(l.fingerprint)) throw fail();
  nodeName(l.name, 'builder name');
  return l;
}

/** What a builder sends once its line checks out: the password it chose, to replace the line's (B3). */
export const BUILDER_ENROL = 'builder.enrol';

export function writeBuilderEnrol(password: string): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, password }));
}

/** The chosen password: as strong as a node's (32 random bytes or more), or a WireError. */
export function readBuilderEnrol(bytes: Uint8Array): string {
  if (bytes.length > 1000)
    throw new WireError('too-large', `builder enrolment is ${bytes.length} bytes, over the limit.`);
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'builder enrolment');
  if (!isObject(v) || v.v !== 1 || typeof v.password !== 'string' || !PASSWORD.test(v.password))
    throw new WireError(
      'malformed',
      'builder enrolment is not {v:1, password} with a password of 43 to 200 base64url characters.',
    );
  return v.password;
}
