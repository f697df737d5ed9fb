// The control plane's own files, in MESH_HOME (default /etc/mesh), each 0600:
//   broker.json  how to reach the broker (loopback, admin) and what nodes dial
//   signing.key  the Ed25519 key every declaration is signed with
// Secrets live in these files, never in the environment or on a command line.
import { readFileSync, statSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { writeAtomic } from '../sys/atomic.js';
import { signingPublic } from '../crypto/sign.js';
import { b64 } from '../crypto/base64.js';
import { refuse, MeshError } from '../sys/errors.js';

export interface BrokerConfig {
  /**
   * Loopback (or a private address), plaintext, admin: the control plane's own
   * hop. A broker cluster: every node's, tried in turn on a lost connection.
   */
  amqp: BrokerHop | BrokerHop[];
  vhost: string;
  user: string;
  password: string;
  /** http://127.0.0.1:PORT of the management API; a cluster: every node's (any answers for all). */
  management: string | string[];
  /** host:port nodes dial over TLS. */
  public: string;
  fingerprint: string;
  /** Prefix of every account this mesh makes, where one broker serves several meshes. */
  accountPrefix?: string;
  /**
   * This broker is one node of a RabbitMQ cluster (the bundle sets it once the
   * first node's broker is clustered), though `amqp` names only this node's
   * loopback: node queues are then quorum, as with a list (W3).
   */
  cluster?: boolean;
}

/**
 * One node's AMQP: plaintext where it is loopback or private; with
 * `fingerprint`, TLS pinned to that certificate (another broker node's TLS
 * listener, already open to the mesh, instead of a new plaintext opening).
 */
export interface BrokerHop {
  host: string;
  port: number;
  fingerprint?: string;
}

export function home(env: NodeJS.ProcessEnv = process.env): string {
  return env.MESH_HOME || '/etc/mesh';
}

function readPrivate(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw refuse('MSHH6', `${path} does not exist`);
  if ((st.mode & 0o077) !== 0)
    throw refuse('MSHH7', `${path} is readable by others (mode ${(st.mode & 0o777).toString(8)})`, `chmod 600 ${path}`);
  return readFileSync(path, 'utf8');
}

export function readBroker(env?: NodeJS.ProcessEnv): BrokerConfig {
  const path = join(home(env), 'broker.json');
  try {
    return JSON.parse(readPrivate(path)) as BrokerConfig;
  } catch (err) {
    if (err instanceof MeshError) throw err;
    throw refuse('MSHH8', `${path} is not valid JSON (${(err as Error).message})`, undefined, err);
  }
}

export async function writeBroker(cfg: BrokerConfig, env?: NodeJS.ProcessEnv): Promise<void> {
  mkdirSync(home(env), { recursive: true, mode: 0o700 });
  await writeAtomic(join(home(env), 'broker.json'), JSON.stringify(cfg, null, 2), 0o600);
}

export interface Signer {
  secret: Uint8Array;
  public: Uint8Array;
  mesh: string;
}

/** The mesh's id is derived from its signing key: another key is another mesh. */
export function meshId(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex').slice(0, 16);
}

export function readSigner(env?: NodeJS.ProcessEnv): Signer {
  const path = join(home(env), 'signing.key');
  const secret = new Uint8Array(Buffer.from(readPrivate(path).trim(), 'base64'));
  if (secret.length !== 32) throw refuse('MSHH9', `${path} does not hold a 32-byte Ed25519 key in base64`);
  const pub = signingPublic(secret);
  return { secret, public: pub, mesh: meshId(pub) };
}

/** Makes the signing key once; an existing key is never replaced. */
export async function ensureSigner(env?: NodeJS.ProcessEnv): Promise<Signer> {
  const path = join(home(env), 'signing.key');
  if (!statSync(path, { throwIfNoEntry: false })) {
    mkdirSync(home(env), { recursive: true, mode: 0o700 });
    // @noble makes keys; loaded here only, so reading the key (every command) does not load it.
    const { signingPair } = await import('../crypto/keys.js');
    await writeAtomic(path, b64(signingPair().secret) + '\n', 0o600);
  }
  return readSigner(env);
}
