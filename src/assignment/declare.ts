// One composing path (DESIGN.md "The loop"): `plan`, `plan --json` and
// `declare` all read assignment.compose and build the body here, so they give
// the same bytes. Declare signs the exact bytes it publishes, records serial
// and digest, and publishes to each node's queue directly.
import { createHash } from 'node:crypto';
import type { Sql } from '../store/connect.js';
import { withStore } from '../store/with_store.js';
import { readBroker, readSigner, type Signer } from '../home/home.js';
import { adminEndpoint } from '../broker/admin.js';
import { connectBroker } from '../broker/connect.js';
import { publish, Unroutable } from '../broker/publish.js';
import { queueOf, nodeName } from '../wire/names.js';
import { storeError } from '../store/errors.js';
import { LIMITS, signText } from '../wire/envelope.js';
import { bodyText } from '../wire/declaration.js';

export function envelope(text: string, signer: Signer): Buffer {
  return signText(text, signer.secret);
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

export async function plan(node: string) {
  nodeName(node);
  const signer = readSigner();
  return withStore('assignment', async (sql) => {
    // A node's overlay address exists before the first composition that carries it (a view cannot write).
    await sql`select overlay.allocate_addresses()`;
    const [row] = await sql`select assignment.peek_serial(${node}) as serial, assignment.compose(${node})::text as resources,
                                   exists (select 1 from assignment.declarable(array[${node}]::text[])) as known`;
    if (!row!.known) throw new Error(`no enrolled node named ${node}: see mesh node list.`);
    const serial = Number(row!.serial);
    return { text: bodyText(signer.mesh, node, serial, row!.resources), serial, resources: JSON.parse(row!.resources) as { id: string; kind: string }[] };
  });
}

export interface Declared { node: string; serial: number; digest: string; sent: boolean; error?: string }

export interface DeclareOptions { nodes?: string[]; changedOnly?: boolean; sql?: Sql; signer?: Signer }

/** Compose, sign and record in one transaction; then publish with confirms. */
export async function declare(opts: DeclareOptions): Promise<Declared[]> {
  opts.nodes?.forEach((n) => nodeName(n));
  const signer = opts.signer ?? readSigner();
  const broker = readBroker();
  const record = (sql: Sql) => sql.begin(async (tx) => {
    // First: this declare's serials and compositions are newer than every declare before it.
    await tx`select assignment.take_declare_turn()`;
    await tx`select overlay.allocate_addresses()`;
    const targets = (await tx`select node from assignment.declarable(${opts.nodes ?? null}::text[])`).map((r) => r.node as string);
    const missing = (opts.nodes ?? []).filter((n) => !targets.includes(n));
    if (missing.length) throw new Error(`no enrolled node named ${missing.join(', ')}: see mesh node list.`);
    // One composition of every target: the overlay graph is computed once, not once a node.
    const composed = await tx`select node, resources::text as resources, resources_hash from assignment.compose_each(${targets}::text[])
                               where ${!opts.changedOnly} or changed`;
    if (composed.length === 0) return [];
    const serials = await tx`select node, serial from assignment.allocate_serials(${composed.map((c) => c.node as string)}::text[])`;
    const serialOf = new Map(serials.map((s) => [s.node as string, Number(s.serial)]));
    const made = composed.map((c) => {
      const node = c.node as string, serial = serialOf.get(node)!;
      const text = bodyText(signer.mesh, node, serial, c.resources);
      return { node, serial, digest: sha256(text), rhash: c.resources_hash as Buffer, env: envelope(text, signer) };
    });
    // Refused here, named, rather than by every host that would receive it.
    const big = made.find((m) => m.env.length > LIMITS.declaration);
    if (big) throw new Error(`the declaration for ${big.node} is ${big.env.length} bytes, over the limit of ${LIMITS.declaration}: move large content out of modules (an image, or a file the node fetches).`);
    await tx`select assignment.record_declarations(${made.map((m) => m.node)}::text[], ${made.map((m) => m.serial)}::bigint[],
               ${made.map((m) => m.digest.toString('hex'))}::text[], ${made.map((m) => m.rhash.toString('hex'))}::text[], ${made.map((m) => m.env.toString('utf8'))}::text[])`;
    return made;
  });
  // A caller's connection (serve's handler) stays open; otherwise one of our own, ended after.
  const out = opts.sql ? await record(opts.sql).catch((err) => { throw storeError(err); }) : await withStore('assignment', record, { max: 2 });
  if (out.length === 0) return [];
  return send(out, broker);
}

/**
 * Confirm channels declare publishes over. One channel is one process in the
 * broker, so one channel's publishes run on one core; the fan-out bench
 * measures one against this many.
 */
export const PUBLISH_CHANNELS = 4;

async function send(out: { node: string; serial: number; digest: Buffer; env: Buffer }[], broker: ReturnType<typeof readBroker>): Promise<Declared[]> {
  const conn = await connectBroker(adminEndpoint(broker), { name: 'mesh declare' });
  try {
    const channels = await Promise.all(Array.from({ length: Math.min(PUBLISH_CHANNELS, out.length) }, () => conn.createConfirmChannel()));
    return await Promise.all(out.map(async (d, i): Promise<Declared> => {
      const r = { node: d.node, serial: d.serial, digest: d.digest.toString('hex') };
      try {
        // Mandatory: a node whose queue is gone (retired) is said, not silently skipped.
        await publish(channels[i % channels.length]!, '', queueOf(d.node), d.env,
          { mandatory: true, messageId: `${d.node}:${d.serial}`, type: 'declaration', contentType: 'application/json' });
        return { ...r, sent: true };
      } catch (err) {
        return { ...r, sent: false, error: err instanceof Unroutable ? `the node's queue ${queueOf(d.node)} does not exist` : 'the broker did not confirm it' };
      }
    }));
  } finally {
    await conn.close().catch(() => {});
  }
}
