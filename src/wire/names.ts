// Node names become broker accounts, queues and permission patterns. The
// pattern admits no character that could widen an anchored regex (`.`, `*`,
// `|`), so no name can let one node read another's queue.
import { refuse } from '../sys/errors.js';

export const NODE_NAME = /^[a-z][a-z0-9-]{0,62}$/;

export function nodeName(value: unknown, what = 'node name'): string {
  if (typeof value !== 'string' || !NODE_NAME.test(value)) {
    throw refuse(
      'MSHF2',
      `${what} ${JSON.stringify(value)} is not allowed`,
      'use a lower-case letter, then up to 62 lower-case letters, digits or dashes',
    );
  }
  return value;
}

/** A node's broker account: `node.NAME`, after the mesh's prefix where one broker serves several meshes. */
export const accountOf = (node: string, prefix = '') => `${prefix}node.${node}`;
export const queueOf = (node: string) => `node.${node}`;
