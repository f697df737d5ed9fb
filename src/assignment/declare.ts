// One composing path (docs/design.md, "The loop"): `plan`, `plan --json` and
// `declare` all read assignment.compose and build the body here, so they give
// the same bytes. Declare signs the exact bytes a node will be sent, records
// serial and digest, and owes each to its node in the outbox, a node's all in
// one transaction (W1; a large fleet in parts, below); `mesh serve` publishes
// them with confirms (src/serve/drain.ts).
import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import type { Sql } from '../store/connect.js';
import { withStore } from '../store/with_store.js';
import { readSigner, type Signer } from '../home/home.js';
import { nodeName } from '../wire/names.js';
import { storeError, refuse, MeshError, codeEntry } from '../sys/errors.js';
import { LIMITS, signText } from '../wire/envelope.js';
import { bodyText, type Freshness } from '../wire/declaration.js';
import type { Tx } from './compose_parts.js';

export function envelope(text: string, signer: Signer): Buffer {
  return signText(text, signer.secret);
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

/**
 * Declarations signed and recorded a chunk at a time: PostgreSQL records one
 * chunk while the next is signed, so neither waits for the other (the two
 * take about as long).
 */
export const RECORD_CHUNK = 1000;

export async function plan(node: string) {
  nodeName(node);
  const signer = readSigner();
  return withStore('assignment', async (sql) => {
    // A node's overlay address exists before the first composition that carries it (a view cannot write).
    await sql`select overlay.allocate_addresses()`;
    const [row] =
      await sql`select assignment.peek_serial(${node}) as serial, assignment.compose(${node})::text as resources,
                                   exists (select 1 from assignment.declarable(array[${node}]::text[])) as known`;
    if (!row!.known) throw refuse('MSH18', `no enrolled node named ${node}`);
    const serial = Number(row!.serial);
    return {
      text: bodyText(signer.mesh, node, serial, row!.resources, await freshness(sql)),
      serial,
      resources: JSON.parse(row!.resources) as { id: string; kind: string }[],
    };
  });
}

/** This transaction's signing time and expiry, as the row it records will default to (sql/assignment/0015). */
async function freshness(sql: Sql | Tx): Promise<Freshness> {
  const [f] =
    await sql`select extract(epoch from assignment.signed_now())::bigint as signed, extract(epoch from assignment.expires_now())::bigint as expires`;
  return { signed: Number(f!.signed), expires: Number(f!.expires) };
}

/** A declaration recorded and owed to its node: in the outbox once SQL committed (W1). */
export interface Declared {
  node: string;
  serial: number;
  digest: string;
  queued: true;
}

export interface DeclareOptions {
  nodes?: string[];
  changedOnly?: boolean;
  /** Only the nodes whose newest declaration is past half its life: signed again, the same resources (freshness). */
  dueOnly?: boolean;
  /** An aborted rollout's debt: these nodes get the resources of the declaration they held before it (assignment.restores_owed). */
  restore?: { rollout: number; nodes: { node: string; serial: number }[] };
  /** The operator's own `mesh declare`: a change a rollout holds is refused (MSH28), not skipped in silence. */
  refuseHeld?: boolean;
  /**
   * With changedOnly: compose only the nodes this change can affect (W2), the nodes placed with
   * these modules and these nodes, not the fleet.
   */
  scope?: { modules: string[]; nodes: string[] };
  /** Told which changed nodes a rollout holds (they were not declared). */
  onHeld?: (nodes: string[]) => void;
  sql?: Sql;
  signer?: Signer;
}

/**
 * The names a declare over many nodes commits apart, each part its own transaction: the first
 * small, so serve's drain and the hosts start on it while the rest compose; the rest as many as
 * assignment.compose_each looks up name by name (sql/assignment/0145), past which it reads each
 * context's view whole (a part of 2,500 at 10,000 nodes cost three times one of 1,000).
 */
export const FIRST_PART = 200;
export const PART = 1000;
/** From this many parts a second connection declares them beside the first. */
export const SECOND_LANE_FROM = 4;
type Reserved = postgres.ReservedSql<Record<string, never>>;

export function partsOf(targets: string[]): string[][] {
  const parts = [targets.slice(0, FIRST_PART)];
  for (let i = FIRST_PART; i < targets.length; i += PART) parts.push(targets.slice(i, i + PART));
  return parts;
}

/**
 * Compose, sign, record and owe; serve delivers what is owed. A node's declaration and its
 * outbox row are always one transaction (W1). On a caller's connection (serve's handlers) all is
 * one transaction. On connections of our own a declare over more than the first part's names
 * commits in parts while holding the declare turn across them: a crash or refusal between parts
 * leaves the nodes of the parts committed on their new declaration and the rest on their previous
 * one, which the next declare sends again.
 */
export async function declare(opts: DeclareOptions): Promise<Declared[]> {
  opts.nodes?.forEach((n) => nodeName(n));
  const signer = opts.signer ?? readSigner();
  const whole = (sql: Sql) =>
    sql.begin(async (tx) => {
      await tx`select assignment.take_declare_turn()`;
      const targets = await prepare(tx, opts);
      return targets.length ? declarePart(tx, targets, opts, signer) : { made: [], held: [] };
    });
  const out = opts.sql
    ? await whole(opts.sql).catch((err) => {
        throw storeError(err);
      })
    : opts.restore || (opts.nodes && opts.nodes.length <= FIRST_PART)
      ? await withStore('assignment', whole)
      : await withStore('assignment', (sql) => declareInParts(sql, opts, signer), { max: 2 });
  if (out.held.length) opts.onHeld?.(out.held);
  return out.made.map((d) => ({
    node: d.node,
    serial: d.serial,
    digest: d.digest.toString('hex'),
    queued: true as const,
  }));
}

/** A declaration as issued: signed, its digest and its composition's hash, on its way to being recorded. */
interface Made {
  node: string;
  serial: number;
  digest: Buffer;
  rhash: Buffer;
  env: Buffer;
}

/** Declarations issued, and the changed nodes set aside because a rollout or freeze holds them. */
interface Issued {
  made: Made[];
  held: string[];
}

/**
 * The declare turn held for the session on a connection of SQL's pool, the targets found there,
 * then each part composed, signed, recorded and owed in a transaction of its own: on that same
 * connection, and with enough parts on a second one at once (one composing while the other is
 * signed and recorded). Nothing else declares meanwhile, so each part composes what the fleet is
 * when it runs; a change committed meanwhile waits for the turn and then finds the nodes of any
 * part composed before it changed.
 */
async function declareInParts(sql: Sql, opts: DeclareOptions, signer: Signer): Promise<Issued> {
  const turn = await sql.reserve();
  const lanes = [turn];
  try {
    await turn`select assignment.hold_declare_turn()`;
    const targets = await prepare(turn, opts);
    if (targets.length === 0) return { made: [], held: [] };
    // A change a rollout or freeze holds is refused before anything commits (MSH28, MSHQ8): with a node held, one part.
    const [h] = await turn`select exists (select 1 from assignment.held_nodes()) as any`;
    const parts = opts.refuseHeld && h!.any ? [targets] : partsOf(targets);
    // A new connection's first composition costs about a tenth of a second more (its caches): worth it past a few parts.
    if (parts.length >= SECOND_LANE_FROM) lanes.push(await sql.reserve());
    const made: Made[][] = [];
    const held: string[] = [];
    let next = 0;
    let failed: unknown;
    const lane = async (conn: Reserved) => {
      while (failed === undefined && next < parts.length) {
        const i = next++;
        // A reserved connection has no begin(): the transaction is spelled out, ended either way.
        try {
          await conn.unsafe('begin');
          const part = await declarePart(conn as unknown as Tx, parts[i]!, opts, signer);
          await conn.unsafe('commit');
          made[i] = part.made;
          held.push(...part.held);
        } catch (err) {
          await conn.unsafe('rollback').catch(() => {});
          failed ??= err;
        }
      }
    };
    await Promise.all(lanes.map(lane));
    if (failed !== undefined) throw partly(failed, made.flat().length, targets.length);
    return { made: made.flat(), held: held.sort() };
  } finally {
    await turn`select assignment.release_declare_turn()`.catch(() => {});
    for (const l of lanes) l.release();
  }
}

/** ERR, said with how many of TOTAL nodes a declare in parts had committed before it (their declarations stand). */
function partly(err: unknown, committed: number, total: number): unknown {
  if (committed === 0) return err;
  const e = storeError(err);
  const said = `${e instanceof MeshError ? e.said : e.message} (after ${committed} of ${total} nodes were declared: theirs stand, the rest hold their previous declaration)`;
  // The same refusal (its code and remedy) said again, not a new one.
  return e instanceof MeshError
    ? new MeshError(codeEntry(e.code)!, said, e.remedy, err)
    : new Error(said, { cause: err });
}

/**
 * Before any node is composed, under the declare turn: the nodes this declare looks at, named
 * ones that are not enrolled refused, addresses allocated, hub capacity checked. Q is the
 * declaring transaction, or the connection holding the turn of a declare in parts.
 */
async function prepare(q: Tx | Reserved, opts: DeclareOptions): Promise<string[]> {
  const targets = await targetsOf(q as Tx, opts);
  // Named nodes that are not enrolled are refused first: `declare ghost` must not succeed in silence.
  const missing = (opts.restore ? [] : (opts.nodes ?? [])).filter((n) => !targets.includes(n));
  if (missing.length) throw refuse('MSH18', `no enrolled node named ${missing.join(', ')}`);
  // Nothing due (serve's freshness round, most of the time): no more SQL than that.
  if (targets.length === 0) return [];
  // A node's overlay address exists before the composition that carries it. A declare that names its
  // nodes addresses those alone (an unaddressed node is nobody's peer); one over the fleet addresses
  // every node waiting and releases the forgotten nodes' addresses (sql/overlay/0150).
  const fleet = !opts.scope && !opts.nodes && !opts.dueOnly && !opts.restore;
  await q`select overlay.allocate_addresses(${fleet ? null : targets}::text[])`;
  // Enough hubs for the spokes, or no hub's declaration would fit (O4): refused, naming the remedy (MSHT1),
  // when a hub is among the nodes composed.
  await q`select overlay.check_hub_capacity(${fleet ? null : targets}::text[])`;
  return targets;
}

/**
 * NODES declared in transaction TX: composed (the overlay graph once, not once a node); a changed
 * composition a rollout holds is not sent (assignment 0017), it is set aside and returned as held,
 * or refused (MSH28) for the operator's own declare; the rest issued. A declaration too large
 * (MSHA1) fails the transaction: none of this part is recorded.
 */
async function declarePart(tx: Tx, nodes: string[], opts: DeclareOptions, signer: Signer): Promise<Issued> {
  const issuer = new Issuer(tx, signer, await freshness(tx));
  const composed = opts.restore
    ? []
    : await tx`select c.node, c.resources, c.resources_hash, c.changed and h.node is not null as held
                 from assignment.compose_each(${nodes}::text[]) c left join assignment.held_nodes() h on h.node = c.node
                where ${!opts.changedOnly} or c.changed`;
  const held = composed.filter((c) => c.held).map((c) => c.node as string);
  const made = await issuer.issue(composed.filter((c) => !c.held));
  await issuer.recorded();
  if (held.length && opts.refuseHeld) await tx`select assignment.refuse_held(${held}::text[])`;
  made.push(...(await signAgain(tx, opts, nodes, held, issuer)));
  await issuer.recorded();
  // The restore is paid in the transaction that records it: a crash before leaves it owed.
  if (opts.restore && made.length)
    await tx`select assignment.restored(${opts.restore.rollout}, ${made.map((m) => m.node)}::text[])`;
  return { made, held };
}

/** The nodes this declare looks at: a restore's, those due for re-signing, a change's scope, the named or all. */
async function targetsOf(tx: Tx, opts: DeclareOptions): Promise<string[]> {
  return (
    opts.restore
      ? await tx`select node from assignment.declarable(${opts.restore.nodes.map((n) => n.node)}::text[])`
      : opts.dueOnly
        ? await tx`select node from assignment.due_for_resigning()`
        : opts.scope
          ? await tx`select node from assignment.declarable(array(
                       select node from assignment.affected_by_modules(${opts.scope.modules}::text[])
                       union select unnest(${opts.scope.nodes}::text[])))`
          : await tx`select node from assignment.declarable(${opts.nodes ?? null}::text[])`
  ).map((r) => r.node as string);
}

/** What a node already holds, signed again: a held node due for re-signing, or an aborted rollout's restore. */
async function signAgain(
  tx: Tx,
  opts: DeclareOptions,
  targets: string[],
  held: string[],
  issuer: Issuer,
): Promise<Made[]> {
  const again =
    opts.restore?.nodes.filter((n) => targets.includes(n.node)) ??
    (opts.dueOnly && held.length
      ? (await tx`select node, serial from assignment.node_serial where node = any(${held}::text[])`).map((r) => ({
          node: r.node as string,
          serial: Number(r.serial),
        }))
      : []);
  if (again.length === 0) return [];
  return issuer.issue(
    await tx`select node, resources, resources_hash from assignment.recorded_resources(${again.map((a) => a.node)}::text[], ${again.map((a) => a.serial)}::bigint[])`,
  );
}

/**
 * Rows composed, issued: serials (allocated by the declaring transaction), bodies, signatures,
 * recorded and owed. A part at a time, so one part is recorded while the next is still composing.
 */
class Issuer {
  // Records in flight: each chunk's statement is sent, then the next chunk signed while PostgreSQL
  // records this one (one connection pipelines them in order). All are awaited before anything
  // after them: a failed one fails the transaction (postgres.js rejects it with that first error).
  private readonly recording: Promise<unknown>[] = [];

  constructor(
    private readonly tx: Tx,
    private readonly signer: Signer,
    private readonly fresh: Freshness,
  ) {}

  /** Every record sent so far, done. */
  async recorded(): Promise<void> {
    await Promise.all(this.recording);
  }

  /** ROWS (node, resources, resources_hash) given serials, signed and sent to be recorded, a chunk at a time. */
  async issue(rows: postgres.Row[]): Promise<Made[]> {
    const { tx } = this;
    if (rows.length === 0) return [];
    const serials =
      await tx`select node, serial from assignment.allocate_serials(${rows.map((c) => c.node as string)}::text[])`;
    const serialOf = new Map(serials.map((s) => [s.node as string, Number(s.serial)]));
    const made: Made[] = [];
    for (let i = 0; i < rows.length; i += RECORD_CHUNK) {
      const chunk = rows.slice(i, i + RECORD_CHUNK).map((c) => this.sign(c, serialOf.get(c.node as string)!));
      // Refused here, named, rather than by every host that would receive it.
      const big = chunk.find((m) => m.env.length > LIMITS.declaration);
      if (big)
        throw refuse(
          'MSHA1',
          `the declaration for ${big.node} is ${big.env.length} bytes, over the limit of ${LIMITS.declaration}`,
        );
      made.push(...chunk);
      this.send(chunk);
      // The statement reaches the socket before the next chunk's signing holds the thread.
      await new Promise((res) => setImmediate(res));
    }
    return made;
  }

  /** Composition row C's declaration at SERIAL: its body, digest and envelope. */
  private sign(c: postgres.Row, serial: number): Made {
    const node = c.node as string;
    const text = bodyText(this.signer.mesh, node, serial, c.resources, this.fresh);
    return {
      node,
      serial,
      digest: sha256(text),
      rhash: c.resources_hash as Buffer,
      env: envelope(text, this.signer),
    };
  }

  /** CHUNK's record statement sent, not awaited: recorded() awaits it before the transaction ends. */
  private send(chunk: Made[]): void {
    // Envelopes as one text, a line each (JSON never holds a raw newline): a text[] of 10,000 is seconds to escape and parse.
    const recorded = this
      .tx`select assignment.record_declarations(${chunk.map((m) => m.node)}::text[], ${chunk.map((m) => m.serial)}::bigint[],
               ${chunk.map((m) => m.digest.toString('hex'))}::text[], ${chunk.map((m) => m.rhash.toString('hex'))}::text[], ${chunk.map((m) => m.env.toString('utf8')).join('\n')}::text)`;
    this.recording.push(recorded);
    recorded.catch(() => {}); // awaited before the transaction ends; not unhandled meanwhile
  }
}

/**
 * W2's one step, called after every change that can alter compositions (an
 * operator command, an enrolment, a rekey): every node whose composition
 * differs from what it was last declared is declared again, and no other.
 * Given a scope (a change that says which nodes it can affect), only those
 * are composed.
 */
export function declareChanged(
  opts: {
    sql?: Sql;
    signer?: Signer;
    onHeld?: (nodes: string[]) => void;
    scope?: DeclareOptions['scope'];
  } = {},
): Promise<Declared[]> {
  return declare({ ...opts, changedOnly: true });
}

/**
 * Freshness: every node whose newest declaration is past half its lifetime
 * is declared again (a new serial and expiry; its composition as it is now,
 * which W2 has already declared if it changed), so a node that hears from
 * the mesh never holds an expired one.
 */
export function declareDue(opts: { sql?: Sql; signer?: Signer } = {}): Promise<Declared[]> {
  return declare({ ...opts, dueOnly: true });
}

/** Resolves once the broker confirmed every one of these (serve drained them), for `declare --wait`. */
export async function waitDelivered(declared: Declared[], timeoutMs = 60_000): Promise<void> {
  if (declared.length === 0) return;
  await withStore('assignment', async (sql) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const [r] = await sql`select count(*)::int as owed from assignment.pending_delivery
                             where (node, serial) in (select * from unnest(${declared.map((d) => d.node)}::text[], ${declared.map((d) => d.serial)}::bigint[]))`;
      if (r!.owed === 0) return;
      if (Date.now() > end)
        throw Object.assign(
          new Error(
            `${r!.owed} declarations are still owed after ${timeoutMs / 1000}s: is mesh serve running and the broker up? See mesh outbox.`,
          ),
          { exitCode: 3 },
        );
      await new Promise((res) => setTimeout(res, 200));
    }
  });
}
