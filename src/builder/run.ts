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
import { Backoff, DEFAULT_BACKOFF } from '../sys/backoff.js';
import { BUILD_RESULT, readBuildRequest, writeMessage, type BuildNews } from '../wire/build.js';
import { loadCredential, credentialPath, type Credential } from './credential.js';
import { buildImage, type BuildSettings } from './build_image.js';

export interface RunOptions { dir: string; env: NodeJS.ProcessEnv; log(line: string): void; signal?: AbortSignal }

export class NotEnrolled extends Error {}

export function settingsFrom(env: NodeJS.ProcessEnv, dir: string): BuildSettings {
  const registry = env.MESH_BUILDER_REGISTRY || '127.0.0.1:5000';
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[::1\](:\d{1,5})?$/.test(registry)) throw new Error(`MESH_BUILDER_REGISTRY ${JSON.stringify(registry)} is not HOST:PORT.`);
  const pull = env.MESH_BUILDER_PULL || 'missing';
  if (!['always', 'missing', 'never', 'newer'].includes(pull)) throw new Error(`MESH_BUILDER_PULL ${JSON.stringify(pull)} must be always, missing, never or newer.`);
  return { registry, pull, env, workRoot: join(dir, 'work') };
}

/** Publish with mandatory and wait for the broker's confirm; a return (nothing bound) is a failure, not silence. */
function send(ch: ConfirmChannel, cred: Credential, news: BuildNews, returned: Set<string>): Promise<void> {
  const messageId = `${news.id}.${news.kind}.${Date.now()}.${Math.random()}`;
  return new Promise<void>((resolve, reject) => {
    ch.publish(EXCHANGE, BUILD_RESULT, writeMessage(news), {
      persistent: true, mandatory: true, userId: cred.broker.user, correlationId: news.id, messageId, contentType: 'application/json', type: BUILD_RESULT,
    }, (err) => {
      if (err) return reject(new Error('the broker did not confirm the answer', { cause: err }));
      if (returned.delete(messageId)) return reject(new Error(`the broker had nowhere to route ${BUILD_RESULT}: is the control queue bound (mesh serve declares it)?`));
      resolve();
    });
  });
}

export async function runBuilder(opts: RunOptions): Promise<void> {
  const cred = loadCredential(opts.dir);
  if (!cred) throw new NotEnrolled(`no credential at ${credentialPath(opts.dir)}: run mesh-builder enrol with the line mesh builder add NAME printed.`);
  const settings = settingsFrom(opts.env, opts.dir);
  // A builder killed mid-build left its clone behind; nobody else uses these.
  rmSync(settings.workRoot, { recursive: true, force: true });
  mkdirSync(settings.workRoot, { recursive: true, mode: 0o700 });
  const backoff = new Backoff(DEFAULT_BACKOFF);
  let stopping = false;
  let conn: Connection | undefined;
  let current: AbortController | undefined;
  let wake: (() => void) | undefined;
  const stop = () => { stopping = true; current?.abort(); void conn?.close().catch(() => {}); wake?.(); };
  opts.signal?.addEventListener('abort', stop);
  const b = cred.broker;

  const handle = async (ch: ConfirmChannel, msg: ConsumeMessage, returned: Set<string>, link: AbortSignal) => {
    // RabbitMQ checks user_id against the publishing connection's account, so
    // this is who asked. Any node may write the mesh exchange; only the
    // control plane may make a machine run a build.
    const from = msg.properties.userId;
    if (from !== cred.requester) {
      opts.log(`refused a build request from ${JSON.stringify(from ?? 'an unnamed sender')}: only the control plane (${cred.requester}) may ask for builds; dropped`);
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
    current = new AbortController();
    const abandon = () => current?.abort();
    link.addEventListener('abort', abandon, { once: true });
    const say = (line: string) => {
      opts.log(`${req.module} ${req.id}: ${line}`);
      send(ch, cred, { v: 1, id: req.id, kind: 'progress', line }, returned).catch(() => { /* progress is best effort; the answer is not */ });
    };
    try {
      say(`started on builder ${cred.name}${msg.fields.redelivered ? ' (redelivered: an earlier attempt did not finish)' : ''}`);
      const result = await buildImage(req, settings, say, current.signal);
      opts.log(result.ok ? `${req.module} ${req.id}: built ${result.image}@${result.digest} from ${result.commit}` : `${req.module} ${req.id}: failed: ${result.error}`);
      await send(ch, cred, result, returned);
      // Only now: the answer is with the broker.
      ch.ack(msg);
      opts.log(`${req.module} ${req.id}: answered`);
    } catch (err) {
      if (current.signal.aborted) { opts.log(`${req.module} ${req.id}: abandoned (${stopping ? 'stopping' : 'lost the broker'}); the broker gives it to another builder`); return; }
      opts.log(`${req.module} ${req.id}: could not answer (${(err as Error).message}); handing the request back`);
      await new Promise((r) => setTimeout(r, 5000));
      try { ch.nack(msg, false, true); } catch { /* channel gone: the broker redelivers */ }
    } finally {
      link.removeEventListener('abort', abandon);
      current = undefined;
    }
  };

  while (!stopping) {
    const link = new AbortController();
    try {
      conn = await connectBroker({ ...b, password: cred.password }, { name: `mesh-builder ${cred.name}` });
      const closed = new Promise<string>((resolve) => { conn!.on('close', (e?: Error) => resolve(e ? e.message : 'closed')); conn!.on('error', () => {}); });
      const ch = await conn.createConfirmChannel();
      ch.on('error', () => {});
      const returned = new Set<string>();
      ch.on('return', (m: ConsumeMessage) => { if (m.properties.messageId) returned.add(String(m.properties.messageId)); });
      await ch.prefetch(1);
      let chain: Promise<void> = Promise.resolve();
      await ch.consume(BUILD_QUEUE, (msg) => { if (msg) chain = chain.then(() => handle(ch, msg, returned, link.signal)); });
      backoff.connected(Date.now());
      opts.log(`builder ${cred.name} consuming ${BUILD_QUEUE} on ${b.host}:${b.port}, pushing to ${settings.registry}`);
      const why = await closed;
      link.abort();
      await chain;
      backoff.disconnected(Date.now());
      if (stopping) break;
      opts.log(`lost the broker (${why})`);
    } catch (err) {
      link.abort();
      if (stopping) break;
      if (err instanceof PinMismatch) opts.log(`refusing the broker: ${err.message}`);
      else opts.log(`cannot reach the broker at ${b.host}:${b.port} (${(err as Error).message})`);
    }
    const wait = backoff.next();
    opts.log(`next attempt in ${wait / 1000}s`);
    await new Promise<void>((r) => { const t = setTimeout(r, wait); wake = () => { clearTimeout(t); r(); }; });
    wake = undefined;
  }
}
