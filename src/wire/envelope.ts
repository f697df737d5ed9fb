// A signed message: {"v":1,"body":"<the exact JSON text signed>","sig":"<base64>"}.
// The body travels as a string so the verifier checks the very bytes that were
// signed; nothing is re-encoded in between.
//
// Malformed and forged are different answers (D1): forged means somebody who is
// not this mesh is trying; malformed means something needs fixing. Replayed is
// neither: the mesh's own genuine declaration, older than the one applied (D2),
// which at-least-once delivery brings back (a redelivery, a broker restart); it
// is refused and said as itself, so forged keeps meaning somebody is trying.
import { plainText } from '../sys/text.js';
import { sign, verify } from '../crypto/sign.js';
import { b64 } from '../crypto/base64.js';
import { codeEntry, MeshError } from '../sys/errors.js';

// stale: genuine, but its signed expiry had passed when it arrived (a withheld or frozen feed).
// replayed: genuine, but not newer than the declaration applied (D2).
export type WireFault = 'malformed' | 'forged' | 'too-large' | 'stale' | 'replayed';

/** The code of a fault when the refusal names none of its own (test/sys/ts_codes.ts reads this table). */
export const FAULT_CODES: Record<WireFault, string> = {
  malformed: 'MSHN0',
  forged: 'MSHN1',
  'too-large': 'MSHN2',
  stale: 'MSHN3',
  replayed: 'MSHN5',
};

/**
 * A message (or a kept file) refused: the fault kind is what the host reports
 * and D1 tells apart; the code beside it (the register's, wire context) says
 * which refusal, as a refuse() does. CODE is a literal where the refusal has
 * its own, else the fault's; the message ends with it, as refuse()'s do.
 */
export class WireError extends MeshError {
  constructor(
    readonly fault: WireFault,
    message: string,
    code: string = FAULT_CODES[fault],
  ) {
    const said = message.replace(/\.$/, '');
    // A code the register lacks is a bug the register test finds; the fault's code still says the kind.
    super(codeEntry(code) ?? codeEntry(FAULT_CODES[fault])!, said, undefined, undefined);
    this.name = 'WireError';
  }
}

/** Refused before parsing: nothing on the wire needs more. */
export const LIMITS = { declaration: 8 << 20, message: 256 << 10 } as const;

/** The one writer of the envelope: TEXT is signed and carried exactly as given. */
export function signText(text: string, secret: Uint8Array): Buffer {
  const sig = sign(Buffer.from(text, 'utf8'), secret);
  return Buffer.from(JSON.stringify({ v: 1, body: text, sig: b64(sig) }), 'utf8');
}

export function signEnvelope(body: unknown, secret: Uint8Array): Buffer {
  return signText(JSON.stringify(body), secret);
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    // Deep nesting ends here too (a RangeError), never as a crash.
    // The parser's message quotes the text it read: plain, like all a node writes.
    throw new WireError('malformed', `${what} is not JSON: ${plainText((err as Error).message.slice(0, 120))}`);
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The envelope's parts, shape-checked but not yet verified. */
export function readEnvelope(bytes: Uint8Array, limit: number, what: string): { text: string; sig: Uint8Array } {
  if (bytes.length > limit)
    throw new WireError('too-large', `${what} is ${bytes.length} bytes, over the limit of ${limit}.`);
  const env = parseJson(Buffer.from(bytes).toString('utf8'), what);
  if (!isObject(env) || env.v !== 1 || typeof env.body !== 'string' || typeof env.sig !== 'string') {
    throw new WireError('malformed', `${what} is not a signed envelope {v:1, body, sig}.`);
  }
  const sig = Buffer.from(env.sig, 'base64');
  // Canonical base64 only: one signature, one spelling.
  if (sig.length !== 64 || sig.toString('base64') !== env.sig)
    throw new WireError('forged', `${what} carries no valid signature.`);
  return { text: env.body, sig };
}

/** Verify against the key we believe, then parse. Throws WireError. */
export function openEnvelope(bytes: Uint8Array, publicKey: Uint8Array, limit: number, what: string): unknown {
  const { text, sig } = readEnvelope(bytes, limit, what);
  if (!verify(sig, Buffer.from(text, 'utf8'), publicKey)) {
    throw new WireError(
      'forged',
      `${what} is not signed by the key this node believes (another mesh, or altered bytes).`,
    );
  }
  return parseJson(text, what);
}
