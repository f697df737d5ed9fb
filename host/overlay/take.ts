// `mesh-host overlay take --tunnel IFACE` (O3): adopt a WireGuard tunnel that
// existed before the mesh, for a node that enrolled before the mesh knew to
// take it over.
//
// The order is the whole point. A takeover that stops the found tunnel and
// only then finds out whether the mesh's interface will do leaves a machine
// with no tunnel at all. So:
//   1. look: the found tunnel's key, port and address, and the file that can
//      start it again;
//   2. prove, before anything is stopped: the declared interface listens on
//      the found port at the found address, and the key file it names holds
//      the found key. The found key becomes the overlay key: the mesh is told
//      first (a rekey signed by the identity key, answered once recorded),
//      the key file written second, so running take again puts right
//      whichever half did not happen;
//   3. stop the found tunnel, start the mesh's; if that fails, start the
//      found one again.
// Every attempt ends in an account: not taken (nothing stopped), taken, or
// down (the mesh's interface failed; says whether the found one is back).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Sade } from 'sade';
import type { ConsumeMessage } from 'amqplib';
import { x25519 } from '@noble/curves/ed25519.js';
import { loadIdentity, saveIdentity, overlayKeyPath, stateDir, type Identity } from '../identity.js';
import { readKept } from '../keep.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { wireguardDriver, WG_DIR } from '../apply/wireguard/driver.js';
import type { DriverContext } from '../apply/driver.js';
import { run, runAny } from '../apply/wireguard/run.js';
import { checkInterfaceName, checkKey, parseDump } from '../apply/wireguard/wgconf.js';
import type { WireguardResource } from '../../src/wire/resources.js';
import { connectBroker } from '../../src/broker/connect.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { key32 } from '../../src/crypto/keys.js';
import { open as openSealed } from '../../src/crypto/seal.js';
import { writeRekey, readRekeyReply } from '../../src/wire/rekey.js';

export type TakeState = 'not taken' | 'taken' | 'down';

export interface TakeAccount {
  state: TakeState;
  tunnel: string;
  /** The mesh's interface. */
  interface: string | null;
  at: string;
  /** Why, in a sentence that names the remedy. */
  reason: string;
  found: { address: string | null; port: number | null; key: string | null; file: string | null };
  /** The mesh recorded the found key as this node's overlay key. */
  told: boolean;
  /** The found key is in the node's overlay key file. */
  written: boolean;
  /** What became of the found tunnel: running (never stopped), stopped, started again, or not started again. */
  foundTunnel: string;
}

import { accountPath } from './found.js';
export { accountPath };

class NotTaken extends Error {}

export interface TakeOptions { dir: string; tunnel: string; log(line: string): void; replyTimeoutMs?: number; lookAgainMs?: number }

export async function take(opts: TakeOptions): Promise<TakeAccount> {
  const acc: TakeAccount = {
    state: 'not taken', tunnel: opts.tunnel, interface: null, at: new Date().toISOString(), reason: '',
    found: { address: null, port: null, key: null, file: null }, told: false, written: false, foundTunnel: 'running',
  };
  try {
    await attempt(opts, acc);
  } catch (err) {
    if (acc.state === 'not taken') {
      acc.reason = err instanceof NotTaken ? err.message : `nothing was stopped: ${(err as Error).message}`;
    } else {
      acc.reason = (err as Error).message;
    }
  }
  acc.at = new Date().toISOString();
  // The account is given on every attempt, failures included, and kept.
  await writeAtomic(accountPath(opts.dir), JSON.stringify(acc, null, 2) + '\n', 0o600).catch((err) => opts.log(`could not keep the account in ${accountPath(opts.dir)}: ${(err as Error).message}`));
  return acc;
}

async function attempt(opts: TakeOptions, acc: TakeAccount): Promise<void> {
  const tunnel = checkInterfaceName(opts.tunnel);
  const id = loadIdentity(opts.dir);
  if (!id) throw new NotTaken(`this machine is not enrolled: run mesh-host enrol TOKEN first, then take ${tunnel} over`);

  // 1. Look at the found tunnel.
  const file = join(WG_DIR, `${tunnel}.conf`);
  if (!(await linkUp(tunnel))) {
    // It may be coming up right now: look again for a moment.
    await new Promise((r) => setTimeout(r, opts.lookAgainMs ?? 2000));
    if (!(await linkUp(tunnel))) throw new NotTaken(`no interface ${tunnel} is up; start it (wg-quick up ${tunnel}) and take it over, or let the mesh raise its own`);
  }
  if ((await readFile(file, 'utf8').catch(() => null)) === null) {
    throw new NotTaken(`${tunnel} was raised by hand, not from ${file}: nothing could start it again if the mesh's interface failed. Take it down (wg-quick down, or ip link delete ${tunnel}) and let the mesh raise its own, or write ${file} and bring it up with wg-quick up ${tunnel}`);
  }
  acc.found.file = file;
  const live = parseDump(await run('wg', ['show', tunnel, 'dump']));
  const foundKey = checkKey(live.privateKey, `the private key of ${tunnel}`);
  const foundPublic = publicOf(foundKey);
  acc.found.key = foundPublic;
  acc.found.port = live.listenPort;
  const addrs = (await run('ip', ['-o', '-4', 'addr', 'show', 'dev', tunnel])).match(/\binet (\d+\.\d+\.\d+\.\d+)\//g) ?? [];
  acc.found.address = addrs[0]?.slice(5, -1) ?? null;

  // 2. Prove the declared interface is the found one, before anything stops.
  const kept = readKept(opts.dir, id);
  const r = kept?.decl.resources.find((x) => x.kind === 'wireguard') as WireguardResource | undefined;
  if (!r) throw new NotTaken(`the mesh has declared no overlay interface for ${id.name} yet: on the control plane, mesh declare --all --changed (a node needs a peer, a hub or a dialable node at its site, to get one)`);
  acc.interface = r.name;
  if (r.name === tunnel) throw new NotTaken(`${tunnel} is the mesh's own interface; there is nothing to take over`);
  if (r.listenPort !== live.listenPort) {
    throw new NotTaken(r.listenPort === undefined
      ? `${tunnel} listens on ${live.listenPort} but the mesh declares ${r.name} on no fixed port (${id.name} is not dialable in the mesh): peers that dial ${tunnel} would lose it. Give the node a dialable address (retire it and issue its token with --dialable HOST:${live.listenPort})`
      : `${tunnel} listens on ${live.listenPort} but the mesh declares ${r.name} on ${r.listenPort}: set the mesh's port (overlay.settings.listen_port) to ${live.listenPort}, or move the tunnel to ${r.listenPort}, and declare again`);
  }
  const declaredAddress = r.address.split('/')[0]!;
  if (declaredAddress !== acc.found.address) {
    throw new NotTaken(`${tunnel} has address ${acc.found.address ?? '(none)'} but the mesh declares ${r.name} with ${declaredAddress}: on the control plane, mesh overlay address ${id.name} ${acc.found.address ?? 'ADDRESS'} and mesh declare --all --changed, then take it over again`);
  }
  const keyPath = overlayKeyPath(opts.dir);
  const held = publicOf(checkKey((await readFile(keyPath, 'utf8')).trim(), `the overlay key file ${keyPath}`));
  if (held !== foundPublic) {
    // Told first: the mesh records the found key (and tells the peers), or refuses and nothing is written.
    await tell(id, { left: held, taken: foundPublic, tunnel }, opts);
    acc.told = true;
    // Written second.
    const next: Identity = { ...id, keys: { ...id.keys, overlay: foundKey } };
    await saveIdentity(opts.dir, next);
    opts.log(`overlay key is now ${tunnel}'s: ${foundPublic}`);
  } else {
    acc.told = true; // a run before this one told the mesh first and then wrote it
  }
  const now = publicOf(checkKey((await readFile(keyPath, 'utf8')).trim(), `the overlay key file ${keyPath}`));
  if (now !== foundPublic) throw new NotTaken(`the overlay key file ${keyPath} does not hold ${tunnel}'s key after writing it: check the disk and run take again`);
  acc.written = true;

  // 3. Only now: stop the found tunnel, start the mesh's, and prove it.
  acc.state = 'down';
  await run('wg-quick', ['down', file]);
  acc.foundTunnel = 'stopped';
  opts.log(`${tunnel}: down`);
  try {
    await wireguardDriver.apply(r, driverContext(opts, id));
    const mine = parseDump(await run('wg', ['show', r.name, 'dump']));
    if (publicOf(mine.privateKey) !== foundPublic || mine.listenPort !== live.listenPort) {
      throw new Error(`${r.name} came up but does not listen on ${live.listenPort} with the found key`);
    }
  } catch (err) {
    const why = (err as Error).message;
    opts.log(`${r.name} failed to start (${why}); starting ${tunnel} again`);
    if (await linkUp(r.name)) await runAny('ip', ['link', 'delete', 'dev', r.name]);
    const again = await runAny('wg-quick', ['up', file]);
    acc.foundTunnel = again.code === 0 ? 'started again' : `not started again: ${again.stderr.trim().split('\n').at(-1)}`;
    throw new Error(`the mesh's interface ${r.name} failed to start (${why}); ${tunnel} was ${acc.foundTunnel === 'started again' ? 'started again and carries on as before' : `${acc.foundTunnel}: start it by hand with wg-quick up ${tunnel}`}. The key it holds is the overlay key now; fix the cause and take it over again`);
  }
  acc.state = 'taken';
  acc.reason = `${r.name} listens on ${live.listenPort} at ${declaredAddress} with ${tunnel}'s key; ${tunnel} is stopped (leave its file: wg-quick up ${tunnel} beside ${r.name} would fight it for the port and the key)`;
}

function publicOf(privateKey: string): string {
  return Buffer.from(x25519.getPublicKey(Buffer.from(privateKey, 'base64'))).toString('base64');
}

async function linkUp(name: string): Promise<boolean> {
  return (await runAny('ip', ['link', 'show', 'dev', name])).code === 0;
}

function driverContext(opts: TakeOptions, id: Identity): DriverContext {
  const sealing = key32(id.keys.sealing, 'keys.sealing');
  return {
    stateDir: opts.dir, roots: [], openSealed: (b) => openSealed(b, sealing), overlayKeyPath: overlayKeyPath(opts.dir),
    changed: new Set(), log: opts.log,
  };
}

/** The rekey, signed by the identity key, answered by the mesh once recorded (or refused). */
async function tell(id: Identity, r: { left: string; taken: string; tunnel: string }, opts: TakeOptions): Promise<void> {
  const bytes = writeRekey({ node: id.name, left: key32(r.left, 'left'), taken: key32(r.taken, 'taken'), tunnel: r.tunnel }, key32(id.keys.identity, 'keys.identity'));
  const conn = await connectBroker({ ...id.broker, password: id.password }, { name: `mesh-host overlay take ${id.name}` })
    .catch((err) => { throw new NotTaken(`the mesh could not be told (${(err as Error).message}); nothing was stopped or written: run take again when the broker is reachable`); });
  try {
    const ch = await conn.createConfirmChannel();
    const correlationId = randomBytes(12).toString('hex');
    const replies = new Promise<ConsumeMessage>((resolve) => {
      void ch.consume('amq.rabbitmq.reply-to', (m) => { if (m && m.properties.correlationId === correlationId) resolve(m); }, { noAck: true });
    });
    await new Promise<void>((resolve, reject) => {
      ch.publish(EXCHANGE, 'rekey', bytes, { replyTo: 'amq.rabbitmq.reply-to', correlationId, userId: id.broker.user, mandatory: true, contentType: 'application/json' },
        (err) => (err ? reject(new NotTaken('the broker did not accept the rekey; nothing was stopped or written: run take again')) : resolve()));
    });
    const timeout = opts.replyTimeoutMs ?? 60_000;
    const msg = await Promise.race([
      replies,
      new Promise<never>((_, reject) => setTimeout(() => reject(new NotTaken(`the mesh did not answer the rekey within ${timeout / 1000}s (is mesh serve running?); nothing was stopped or written: run take again`)), timeout).unref()),
    ]);
    const answer = readRekeyReply(msg.content);
    if (!answer.ok) throw new NotTaken(`${answer.reason}; nothing was stopped or written`);
    opts.log(`the mesh recorded ${r.taken} as ${id.name}'s overlay key${answer.outcome === 'again' ? ' (it already had)' : ''}`);
  } finally {
    await conn.close().catch(() => {});
  }
}

export function registerOverlayHost(prog: Sade): void {
  prog.command('overlay take')
    .describe([
      'Adopt a WireGuard tunnel that ran here before the mesh (O3): its key becomes this node\'s overlay key and the mesh\'s',
      'interface takes its place. Nothing is stopped until the declared interface is proven to listen on the tunnel\'s port, at',
      'its address, with its key; the mesh is told the key (signed by this node\'s identity key) before it is written here.',
      'If the mesh\'s interface fails to start, the tunnel is started again. The account (not taken / taken / down) is printed',
      'and kept in MESH_HOST_DIR/overlay-take.json. Exit 0 only when taken.',
    ])
    .option('--tunnel', 'The interface to take over, raised by wg-quick from /etc/wireguard/IFACE.conf')
    .option('--json', 'Print the account as JSON')
    .example('overlay take --tunnel wg0')
    .action(async (o: { tunnel?: string; json?: boolean }) => {
      if (!o.tunnel) { process.stderr.write('mesh-host: name the tunnel to take over: --tunnel IFACE.\n'); process.exitCode = 1; return; }
      const say = (l: string) => process.stderr.write(`${new Date().toISOString()} ${l}\n`);
      try {
        const acc = await take({ dir: stateDir(), tunnel: String(o.tunnel), log: say });
        if (o.json) process.stdout.write(JSON.stringify(acc, null, 2) + '\n');
        else process.stdout.write(`${acc.state}: ${acc.reason}\n`);
        if (acc.state !== 'taken') process.exitCode = acc.state === 'down' ? 3 : 2;
      } catch (err) {
        process.stderr.write(`mesh-host: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
