// The names and addresses every part of the mesh writes and reads, each rule
// once, with its writer beside its parser. SQL keeps its own check
// constraints (the database's own guard); TypeScript spells each rule here.
//
// Node names become broker accounts, queues and permission patterns. The
// pattern admits no character that could widen an anchored regex (`.`, `*`,
// `|`), so no name can let one node read another's queue.
import { refuse } from '../sys/errors.js';

export const NODE_NAME = /^[a-z][a-z0-9-]{0,62}$/;

export const isNodeName = (v: unknown): v is string => typeof v === 'string' && NODE_NAME.test(v);

export function nodeName(value: unknown, what = 'node name'): string {
  if (!isNodeName(value)) {
    throw refuse(
      'MSHF2',
      `${what} ${JSON.stringify(value)} is not allowed`,
      'use a lower-case letter, then up to 62 lower-case letters, digits or dashes',
    );
  }
  return value;
}

/** Who a broker account belongs to: a node, or a build machine. */
export type AccountKind = 'node' | 'builder';

/** A broker account: `node.NAME` or `builder.NAME`, after the mesh's prefix where one broker serves several meshes. */
export const accountOf = (name: string, prefix = '', kind: AccountKind = 'node') => `${prefix}${kind}.${name}`;

/** The kind and name of the account USER, or undefined when it is none of the mesh's (another prefix, another shape). */
export function accountFrom(user: string, prefix = ''): { kind: AccountKind; name: string } | undefined {
  if (!user.startsWith(prefix)) return undefined;
  const rest = user.slice(prefix.length);
  const dot = rest.indexOf('.');
  const kind = rest.slice(0, dot),
    name = rest.slice(dot + 1);
  if ((kind !== 'node' && kind !== 'builder') || !isNodeName(name)) return undefined;
  return { kind, name };
}

export const queueOf = (node: string) => `node.${node}`;

/** A certificate's SHA-256 as openssl prints it: 32 upper-case hex pairs joined by colons. */
export const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

export const isFingerprint = (v: unknown): v is string => typeof v === 'string' && FINGERPRINT.test(v);

/** A host as the mesh dials it: a DNS name or an IPv4 address (no character that could end a line or a field). */
export const HOST = /^[A-Za-z0-9.-]{1,253}$/;

export const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

/** HOST:PORT, as tokens, brokers, endpoints and dialable addresses are written. */
export const joinHostPort = (host: string, port: number) => `${host}:${port}`;

function readHostPort(s: unknown): { host: string; port: number } | undefined {
  if (typeof s !== 'string') return undefined;
  const at = s.lastIndexOf(':');
  const host = s.slice(0, at),
    port = s.slice(at + 1);
  if (at < 0 || !HOST.test(host) || !/^\d{1,5}$/.test(port) || !isPort(Number(port))) return undefined;
  return { host, port: Number(port) };
}

/** Whether S is HOST:PORT (each caller refuses with its own code when it is not). */
export const isHostPort = (s: unknown): s is string => readHostPort(s) !== undefined;

/** HOST:PORT to its parts, or an error naming the form. */
export function splitHostPort(s: string): { host: string; port: number } {
  const a = readHostPort(s);
  if (!a) throw new Error(`${JSON.stringify(s)} is not HOST:PORT.`);
  return a;
}
