// O3: a node tells the mesh its overlay key changed (a tunnel taken over),
// signed by its identity key, over the key it left, the key it took and the
// tunnel. ONE definition, used by the host to write it (host/overlay/take.ts)
// and by the control plane to read it (src/serve/handlers/rekey.ts).
import { b64, key32 } from '../crypto/keys.js';
import { verify } from '../crypto/sign.js';
import { signEnvelope, readEnvelope, parseJson, isObject, WireError, LIMITS } from './envelope.js';
import { nodeName } from './names.js';

export interface Rekey {
  node: string;
  left: Uint8Array;
  taken: Uint8Array;
  tunnel: string;
}

const TUNNEL = /^[a-z][a-z0-9_-]{0,14}$/;

export function writeRekey(r: Rekey, identitySecret: Uint8Array): Buffer {
  return signEnvelope(
    { v: 1, kind: 'rekey', node: r.node, left: b64(r.left), taken: b64(r.taken), tunnel: r.tunnel },
    identitySecret,
  );
}

/** Shape-checked; verify() against the node's recorded identity key before believing a byte. */
export function readRekey(bytes: Uint8Array): { rekey: Rekey; verify(identityKey: Uint8Array): boolean } {
  const { text, sig } = readEnvelope(bytes, LIMITS.message, 'rekey');
  const body = parseJson(text, 'rekey');
  if (
    !isObject(body) ||
    body.v !== 1 ||
    body.kind !== 'rekey' ||
    typeof body.tunnel !== 'string' ||
    !TUNNEL.test(body.tunnel)
  ) {
    throw new WireError('malformed', 'rekey lacks {v:1, kind:"rekey", node, left, taken, tunnel}.');
  }
  let rekey: Rekey;
  try {
    rekey = {
      node: nodeName(body.node),
      left: key32(body.left, 'left'),
      taken: key32(body.taken, 'taken'),
      tunnel: body.tunnel,
    };
  } catch (err) {
    throw new WireError('malformed', `rekey: ${(err as Error).message}`);
  }
  return { rekey, verify: (key) => verify(sig, Buffer.from(text, 'utf8'), key) };
}

/** The control plane's answer, on the asker's direct reply-to. */
export type RekeyReply = { ok: true; outcome: 'rekeyed' | 'again' } | { ok: false; reason: string };

export function readRekeyReply(bytes: Uint8Array): RekeyReply {
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'rekey reply');
  if (isObject(v) && v.ok === true && (v.outcome === 'rekeyed' || v.outcome === 'again'))
    return { ok: true, outcome: v.outcome };
  if (isObject(v) && v.ok === false && typeof v.reason === 'string') return { ok: false, reason: v.reason };
  throw new WireError('malformed', 'rekey reply has neither {ok:true, outcome} nor {ok:false, reason}.');
}
