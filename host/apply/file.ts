// A file with exact bytes, mode and owner; or, create-once (D5), a file that
// is written when absent and then left to whoever edits it.
import type { FileResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { digestOf } from './digest.js';
import { parseMode, resolveOwner } from './owner.js';
import { observeFile, placeFile, removeFile } from './place_file.js';

async function wanted(r: FileResource) {
  return {
    id: r.id,
    path: r.path,
    bytes: Buffer.from(r.content, 'base64'),
    mode: parseMode(r.mode, 0o644),
    owner: await resolveOwner(r.owner),
    createOnce: r.createOnce === true,
  };
}

export const fileDriver: Driver<FileResource> = {
  kind: 'file',
  target: (r) => r.path,
  digest: (r) =>
    digestOf({
      kind: 'file',
      path: r.path,
      content: r.content,
      mode: r.mode,
      owner: r.owner ?? 'root',
      createOnce: r.createOnce === true,
    }),
  async observe(r, ctx) {
    const w = await wanted(r);
    return observeFile({ ...w, bytes: () => w.bytes }, ctx);
  },
  async apply(r, ctx) {
    return placeFile(await wanted(r), ctx);
  },
  async remove(held, ctx) {
    await removeFile(held.target, ctx);
  },
};
