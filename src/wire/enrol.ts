// E5: the enrolment request has ONE definition, used by the host to write it
// and by the control plane to read it. A field renamed on one side would
// otherwise fail silently: enrolment succeeds, a key is absent, and the first
// secret sealed to the node cannot be opened.
import { b64, key32, type NodeKeys } from '../crypto/keys.js';
import { verify } from '../crypto/sign.js';
import { signEnvelope, readEnvelope, parseJson, isObject, WireError, LIMITS } from './envelope.js';
import { nodeName } from './names.js';

/**
 * v:2. The node chooses its own broker password and sends it here; the control
 * plane sets the account's password to it once the token is spent. A node that
 * loses its connection before it reads the welcome still knows the password
 * (it kept it in its pending file before sending), so it dials again with it
 * instead of being locked out by one it never read. The request redelivered
 * carries the same password, so an answer 'again' sets the same one. The
 * password sits in mesh.control until a serve consumes the request, as the
 * token's secret already does: both are readable only by the control plane's
 * account there.
 */
export interface EnrolRequest {
  name: string;
  /** The token's secret: spent by hash in SQL. */
  secret: string;
  /** The broker password the node chose (32 random bytes, base64url). */
  password: string;
  identity: Uint8Array;
  overlay: Uint8Array;
  sealing: Uint8Array;
}

/** A chosen password at least this long, of base64url only: 32 random bytes are 43 characters. */
export const PASSWORD = /^[A-Za-z0-9_-]{43,200}$/;

/** Signed with the identity key it carries: the node proves it holds the key. */
export function writeEnrolRequest(name: string, secret: string, password: string, keys: NodeKeys): Buffer {
  return signEnvelope(
    {
      v: 2,
      name,
      secret,
      password,
      keys: {
        identity: b64(keys.identity.public),
        overlay: b64(keys.overlay.public),
        sealing: b64(keys.sealing.public),
      },
    },
    keys.identity.secret,
  );
}

export function readEnrolRequest(bytes: Uint8Array): EnrolRequest {
  const { text, sig } = readEnvelope(bytes, LIMITS.message, 'enrolment request');
  const body = parseJson(text, 'enrolment request');
  if (
    !isObject(body) ||
    body.v !== 2 ||
    !isObject(body.keys) ||
    typeof body.secret !== 'string' ||
    body.secret.length > 200
  ) {
    throw new WireError(
      'malformed',
      'enrolment request lacks {v:2, name, secret, password, keys} (a mesh-host from before v:2 chose no password: update it).',
    );
  }
  if (typeof body.password !== 'string')
    throw new WireError('malformed', 'enrolment request carries no broker password.');
  // A weak password would guard the node's account for years: refused, not taken.
  if (!PASSWORD.test(body.password))
    throw new WireError(
      'malformed',
      'enrolment request carries a weak broker password (not 43 to 200 base64url characters: 32 random bytes or more).',
      'MSHN6',
    );
  let req: EnrolRequest;
  try {
    req = {
      name: nodeName(body.name),
      secret: body.secret,
      password: body.password,
      identity: key32(body.keys.identity, 'keys.identity'),
      overlay: key32(body.keys.overlay, 'keys.overlay'),
      sealing: key32(body.keys.sealing, 'keys.sealing'),
    };
  } catch (err) {
    throw new WireError('malformed', `enrolment request: ${(err as Error).message}`);
  }
  if (!verify(sig, Buffer.from(text, 'utf8'), req.identity)) {
    throw new WireError('forged', 'enrolment request is not signed by the identity key it presents.');
  }
  return req;
}

export interface EnrolWelcome {
  ok: true;
  mesh: string;
  node: string;
  /** The control plane's Ed25519 public key: every declaration is checked against it. */
  signingKey: string;
}
export interface EnrolRefusal {
  ok: false;
  reason: string;
}
export type EnrolReply = EnrolWelcome | EnrolRefusal;

/** E3: the node is told one thing for every reason. The operator's log says which. */
export const REFUSAL: EnrolRefusal = {
  ok: false,
  reason: 'this token cannot be used: ask the operator for a new one (mesh token issue NAME)',
};

export function readEnrolReply(bytes: Uint8Array): EnrolReply {
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'enrolment reply');
  if (isObject(v) && v.ok === false && typeof v.reason === 'string') return { ok: false, reason: v.reason };
  if (
    isObject(v) &&
    v.ok === true &&
    typeof v.mesh === 'string' &&
    typeof v.node === 'string' &&
    typeof v.signingKey === 'string'
  ) {
    key32(v.signingKey, 'signingKey');
    return { ok: true, mesh: v.mesh, node: v.node, signingKey: v.signingKey };
  }
  throw new WireError(
    'malformed',
    'enrolment reply has neither {ok:true, mesh, node, signingKey} nor {ok:false, reason}.',
  );
}
