// A file holding one credential (S2), opened from its sealed blob only here,
// on the node, at the moment it is written. Private (0600) unless declared.
import type { SecretFileResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { digestOf } from './digest.js';
import { parseMode } from './owner.js';
import { observeFile, placeFile, removeFile } from './place_file.js';

function wanted(r: SecretFileResource) {
  return {
    id: r.id,
    path: r.path,
    mode: parseMode(r.mode, 0o600),
    owner: { uid: 0, gid: 0 },
    createOnce: false,
  };
}

export const secretDriver: Driver<SecretFileResource> = {
  kind: 'secret',
  target: (r) => r.path,
  // Over the sealed blob, never the plaintext: applied.json and reports carry
  // digests, and a hash of a short password is a way to guess it.
  digest: (r) => digestOf({ kind: 'secret', path: r.path, mode: r.mode, sealed: r.sealed }),
  async observe(r, ctx) {
    return observeFile({ ...wanted(r), bytes: () => ctx.openSealed(r.sealed) }, ctx);
  },
  async apply(r, ctx) {
    return placeFile({ ...wanted(r), bytes: ctx.openSealed(r.sealed) }, ctx);
  },
  async remove(held, ctx) {
    await removeFile(held.target, ctx);
  },
};
