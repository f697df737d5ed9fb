// `mesh-builder run`: take build requests off the one shared queue, one at a
// time (prefetch 1: five builds at once on one runtime finish all five later
// than the first would have; the queue shares work between machines), and
// ack each only once its answer is confirmed by the broker. A builder that
// dies mid-build has acked nothing, so the broker hands the request to
// another; a link lost mid-build abandons the build for the same reason.
import { rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { connectBroker, type Connection } from '../broker/connect.js';
import { PinMismatch } from '../broker/pin.js';
import { EXCHANGE, BUILD_QUEUE } from '../broker/topology.js';
import { publish, Unroutable } from '../broker/publish.js';
import { Backoff, DEFAULT_BACKOFF } from '../sys/backoff.js';
import { BUILD_RESULT, readBuildRequest, writeMessage, type BuildNews } from '../wire/build.js';
import { loadCredential, credentialPath, type Credential } from './credential.js';
import { buildImage, type BuildSettings } from './build_image.js';
import { refuse } from '../sys/errors.js';

export interface RunOptions {
  dir: string;
  env: NodeJS.ProcessEnv;
  log(line: string): void;
  signal?: AbortSignal;
}

export function settingsFrom(env: NodeJS.ProcessEnv, dir: string): BuildSettings {
  const registry = env.MESH_BUILDER_REGISTRY || '127.0.0.1:5000';
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[::1\](:\d{1,5})?$/.test(registry))
    throw refuse('MSHM8', `MESH_BUILDER_REGISTRY ${JSON.stringify(registry)} is not HOST:PORT`);
  const pull = env.MESH_BUILDER_PULL || 'missing';
  if (!['always', 'missing', 'never', 'newer'].includes(pull))
    throw refuse('MSHM9', `MESH_BUILDER_PULL ${JSON.stringify(pull)} is no pull policy`);
  return { registry, pull, env, workRoot: join(dir, 'work') };
}

/** Mandatory and confirmed: a return (nothing bound) is a failure, not silence. */
async function send(ch: ConfirmChannel, cred: Credential, news: BuildNews): Promise<void> {
  try {
    await publish(ch, EXCHANGE, BUILD_RESULT, writeMessage(news), {
      mandatory: true,
      userId: cred.broker.user,
      correlationId: news.id,
      contentType: 'application/json',
      type: BUILD_RESULT,
    });
  } catch (err) {
    if (err instanceof Unroutable)
      throw new Error(
        `the broker had nowhere to route ${BUILD_RESULT}: is the control queue bound (mesh serve declares it)?`,
        { cause: err },
      );
    throw err;
  }
}

/** What one running builder shares between its requests and its connections. */
interface Builder {
  opts: RunOptions;
  cred: Credential;
  settings: BuildSettings;
  stopping: boolean;
  conn?: Connection;
  /** The build under way, aborted when the link goes or the builder stops. */
  current?: AbortController;
}

/** Credential, settings, and a clean work folder: a builder killed mid-build left its clone behind; nobody else uses these. */
function prepare(opts: RunOptions): Builder {
  const cred = loadCredential(opts.dir);
  if (!cred) throw refuse('MSHP6', `no credential at ${credentialPath(opts.dir)}`);
  const settings = settingsFrom(opts.env, opts.dir);
  rmSync(settings.workRoot, { recursive: true, force: true });
  mkdirSync(settings.workRoot, { recursive: true, mode: 0o700 });
  return { opts, cred, settings, stopping: false };
}

/** One request: checked, built, answered, and acked only once the answer is with the broker. */
async function handle(b: Builder, ch: ConfirmChannel, msg: ConsumeMessage, link: AbortSignal): Promise<void> {
  const { opts, cred } = b;
  // RabbitMQ checks user_id against the publishing connection's account, so
  // this is who asked. Any node may write the mesh exchange; only the
  // control plane may make a machine run a build.
  const from = msg.properties.userId;
  if (from !== cred.requester) {
    opts.log(
      `refused a build request from ${JSON.stringify(from ?? 'an unnamed sender')}: only the control plane (${cred.requester}) may ask for builds; dropped`,
    );
    ch.ack(msg);
    return;
  }
  let req;
  try {
    req = readBuildRequest(msg.content);
  } catch (err) {
    opts.log(`dropped a malformed build request: ${(err as Error).message}`);
    ch.ack(msg);
    return;
  }
  const current = (b.current = new AbortController());
  const abandon = () => current.abort();
  link.addEventListener('abort', abandon, { once: true });
  const say = (line: string) => {
    opts.log(`${req.module} ${req.id}: ${line}`);
    send(ch, cred, { v: 1, id: req.id, kind: 'progress', line }).catch(() => {
      /* progress is best effort; the answer is not */
    });
  };
  try {
    say(
      `started on builder ${cred.name}${msg.fields.redelivered ? ' (redelivered: an earlier attempt did not finish)' : ''}`,
    );
    const result = await buildImage(req, b.settings, say, current.signal);
    opts.log(
      result.ok
        ? `${req.module} ${req.id}: built ${result.image}@${result.digest} from ${result.commit}`
        : `${req.module} ${req.id}: failed: ${result.error}`,
    );
    await send(ch, cred, result);
    // Only now: the answer is with the broker.
    ch.ack(msg);
    opts.log(`${req.module} ${req.id}: answered`);
  } catch (err) {
    if (current.signal.aborted) {
      opts.log(
        `${req.module} ${req.id}: abandoned (${b.stopping ? 'stopping' : 'lost the broker'}); the broker gives it to another builder`,
      );
      return;
    }
    opts.log(`${req.module} ${req.id}: could not answer (${(err as Error).message}); handing the request back`);
    await new Promise((r) => setTimeout(r, 5000));
    try {
      ch.nack(msg, false, true);
    } catch {
      /* channel gone: the broker redelivers */
    }
  } finally {
    link.removeEventListener('abort', abandon);
    b.current = undefined;
  }
}

/** One connection: consume until it closes, then let the build under way (abandoned) finish. */
async function connection(b: Builder, backoff: Backoff): Promise<void> {
  const link = new AbortController();
  const e = b.cred.broker;
  try {
    const conn = (b.conn = await connectBroker(
      { ...e, password: b.cred.password },
      { name: `mesh-builder ${b.cred.name}` },
    ));
    const closed = new Promise<string>((resolve) => {
      conn.on('close', (err?: Error) => resolve(err ? err.message : 'closed'));
      conn.on('error', () => {});
    });
    const ch = await conn.createConfirmChannel();
    ch.on('error', () => {});
    await ch.prefetch(1);
    let chain: Promise<void> = Promise.resolve();
    // No message: the broker cancelled us (the queue was made again as quorum):
    // once the build under way is answered, connect again to consume the new one.
    await ch.consume(BUILD_QUEUE, (msg) => {
      chain = chain.then(() => (msg ? handle(b, ch, msg, link.signal) : void conn.close().catch(() => {})));
    });
    backoff.connected(Date.now());
    b.opts.log(
      `builder ${b.cred.name} consuming ${BUILD_QUEUE} on ${e.host}:${e.port}, pushing to ${b.settings.registry}`,
    );
    const why = await closed;
    link.abort();
    await chain;
    backoff.disconnected(Date.now());
    if (!b.stopping) b.opts.log(`lost the broker (${why})`);
  } catch (err) {
    link.abort();
    if (b.stopping) return;
    if (err instanceof PinMismatch) b.opts.log(`refusing the broker: ${err.message}`);
    else b.opts.log(`cannot reach the broker at ${e.host}:${e.port} (${(err as Error).message})`);
  }
}

export async function runBuilder(opts: RunOptions): Promise<void> {
  const b = prepare(opts);
  const backoff = new Backoff(DEFAULT_BACKOFF);
  let wake: (() => void) | undefined;
  const stop = () => {
    b.stopping = true;
    b.current?.abort();
    void b.conn?.close().catch(() => {});
    wake?.();
  };
  opts.signal?.addEventListener('abort', stop);
  while (!b.stopping) {
    await connection(b, backoff);
    if (b.stopping) break;
    const wait = backoff.next();
    opts.log(`next attempt in ${wait / 1000}s`);
    await new Promise<void>((r) => {
      const t = setTimeout(r, wait);
      wake = () => {
        clearTimeout(t);
        r();
      };
    });
    wake = undefined;
  }
}
