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
import type { ConsumeMessage } from 'amqplib';
import { x25519 } from '@noble/curves/ed25519.js';
import { loadIdentity, saveIdentity, overlayKeyPath, type Identity } from '../identity.js';
import { readKept } from '../keep.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { wireguardDriver } from '../apply/wireguard/driver.js';
import { driverSettings, type HostConfig } from '../config.js';
import type { DriverContext } from '../apply/driver.js';
import { run, runAny } from '../../src/sys/proc.js';
import { quietEnv } from '../apply/wireguard/quiet_env.js';
import { checkInterfaceName, checkKey, parseDump } from '../apply/wireguard/wgconf.js';
import type { WireguardResource } from '../../src/wire/resources.js';
import { connectBroker } from '../../src/broker/connect.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { publish } from '../../src/broker/publish.js';
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

import { accountPath } from '../apply/wireguard/found.js';
import { refuse, MeshError } from '../../src/sys/errors.js';
export { accountPath };

class NotTaken extends Error {}

export interface TakeOptions {
  dir: string;
  /** The host's settings (where wg-quick files live). */
  config: HostConfig;
  tunnel: string;
  log(line: string): void;
  replyTimeoutMs?: number;
  lookAgainMs?: number;
}

export async function take(opts: TakeOptions): Promise<TakeAccount> {
  const acc: TakeAccount = {
    state: 'not taken',
    tunnel: opts.tunnel,
    interface: null,
    at: new Date().toISOString(),
    reason: '',
    found: { address: null, port: null, key: null, file: null },
    told: false,
    written: false,
    foundTunnel: 'running',
  };
  try {
    await attempt(opts, acc);
  } catch (err) {
    if (acc.state === 'not taken') {
      acc.reason =
        err instanceof NotTaken || err instanceof MeshError
          ? err.message
          : `nothing was stopped: ${(err as Error).message}`;
    } else {
      acc.reason = (err as Error).message;
    }
  }
  acc.at = new Date().toISOString();
  // The account is given on every attempt, failures included, and kept.
  await writeAtomic(accountPath(opts.dir), JSON.stringify(acc, null, 2) + '\n', 0o600).catch((err) =>
    opts.log(`could not keep the account in ${accountPath(opts.dir)}: ${(err as Error).message}`),
  );
  return acc;
}

async function attempt(opts: TakeOptions, acc: TakeAccount): Promise<void> {
  const tunnel = checkInterfaceName(opts.tunnel);
  const id = loadIdentity(opts.dir);
  if (!id)
    throw refuse(
      'MSHG6',
      'this machine is not enrolled',
      `run echo TOKEN | mesh-host enrol first, then take ${tunnel} over`,
    );
  const found = await look(tunnel, opts, acc);
  const r = prove(tunnel, found, id, opts, acc);
  await adoptKey(tunnel, found, id, opts, acc);
  await switchOver(tunnel, found, r, id, opts, acc);
}

interface Found {
  file: string;
  key: string;
  public: string;
  listenPort: number | undefined;
}

/** 1. Look at the found tunnel: up, started from a file, its key, port and address. */
async function look(tunnel: string, opts: TakeOptions, acc: TakeAccount): Promise<Found> {
  const file = join(opts.config.wgDir, `${tunnel}.conf`);
  if (!(await linkUp(tunnel))) {
    // It may be coming up right now: look again for a moment.
    await new Promise((r) => setTimeout(r, opts.lookAgainMs ?? 2000));
    if (!(await linkUp(tunnel)))
      throw refuse(
        'MSHK1',
        `no interface ${tunnel} is up`,
        `start it (wg-quick up ${tunnel}) and take it over, or let the mesh raise its own`,
      );
  }
  if ((await readFile(file, 'utf8').catch(() => null)) === null) {
    throw refuse(
      'MSHK2',
      `${tunnel} was raised by hand, not from ${file}: nothing could start it again if the mesh's interface failed`,
      `take it down (wg-quick down, or ip link delete ${tunnel}) and let the mesh raise its own, or write ${file} and bring it up with wg-quick up ${tunnel}`,
    );
  }
  acc.found.file = file;
  const live = parseDump(await run('wg', ['show', tunnel, 'dump']));
  const key = checkKey(live.privateKey, `the private key of ${tunnel}`);
  const found = { file, key, public: publicOf(key), listenPort: live.listenPort };
  acc.found.key = found.public;
  acc.found.port = live.listenPort;
  const addrs =
    (await run('ip', ['-o', '-4', 'addr', 'show', 'dev', tunnel])).match(/\binet (\d+\.\d+\.\d+\.\d+)\//g) ?? [];
  acc.found.address = addrs[0]?.slice(5, -1) ?? null;
  return found;
}

/** 2. Prove the declared interface is the found one (port, address), before anything stops. */
function prove(tunnel: string, found: Found, id: Identity, opts: TakeOptions, acc: TakeAccount): WireguardResource {
  const kept = readKept(opts.dir, id);
  const r = kept?.decl.resources.find((x) => x.kind === 'wireguard') as WireguardResource | undefined;
  if (!r) throw refuse('MSHK3', `the mesh has declared no overlay interface for ${id.name} yet`);
  acc.interface = r.name;
  if (r.name === tunnel) throw refuse('MSHK4', `${tunnel} is the mesh's own interface; there is nothing to take over`);
  if (r.listenPort !== found.listenPort) {
    throw r.listenPort === undefined
      ? refuse(
          'MSHK5',
          `${tunnel} listens on ${found.listenPort} but the mesh declares ${r.name} on no fixed port (${id.name} is not dialable in the mesh): peers that dial ${tunnel} would lose it`,
          `give the node a dialable address (retire it and issue its token with --dialable HOST:${found.listenPort})`,
        )
      : refuse(
          'MSHK5',
          `${tunnel} listens on ${found.listenPort} but the mesh declares ${r.name} on ${r.listenPort}`,
          `set the mesh's port (overlay.settings.listen_port) to ${found.listenPort}, or move the tunnel to ${r.listenPort}, and declare again`,
        );
  }
  const declaredAddress = r.address.split('/')[0]!;
  if (declaredAddress !== acc.found.address) {
    throw refuse(
      'MSHG7',
      `${tunnel} has address ${acc.found.address ?? '(none)'} but the mesh declares ${r.name} with ${declaredAddress}`,
      `on the control plane, mesh overlay address ${id.name} ${acc.found.address ?? 'ADDRESS'} and mesh declare --all --changed, then take it over again`,
    );
  }
  return r;
}

/** 2, continued: the found key becomes the overlay key, the mesh told first and the key file written second. */
async function adoptKey(
  tunnel: string,
  found: Found,
  id: Identity,
  opts: TakeOptions,
  acc: TakeAccount,
): Promise<void> {
  const keyPath = overlayKeyPath(opts.dir);
  const heldKey = async () =>
    publicOf(checkKey((await readFile(keyPath, 'utf8')).trim(), `the overlay key file ${keyPath}`));
  const held = await heldKey();
  if (held !== found.public) {
    // Told first: the mesh records the found key (and tells the peers), or refuses and nothing is written.
    await tell(id, { left: held, taken: found.public, tunnel }, opts);
    acc.told = true;
    // Written second.
    const next: Identity = { ...id, keys: { ...id.keys, overlay: found.key } };
    await saveIdentity(opts.dir, next);
    opts.log(`overlay key is now ${tunnel}'s: ${found.public}`);
  } else {
    acc.told = true; // a run before this one told the mesh first and then wrote it
  }
  if ((await heldKey()) !== found.public)
    throw new NotTaken(
      `the overlay key file ${keyPath} does not hold ${tunnel}'s key after writing it: check the disk and run take again`,
    );
  acc.written = true;
}

/** 3. Only now: stop the found tunnel, start the mesh's, and prove it; on failure start the found one again. */
async function switchOver(
  tunnel: string,
  found: Found,
  r: WireguardResource,
  id: Identity,
  opts: TakeOptions,
  acc: TakeAccount,
): Promise<void> {
  acc.state = 'down';
  await run('wg-quick', ['down', found.file]);
  acc.foundTunnel = 'stopped';
  opts.log(`${tunnel}: down`);
  try {
    await wireguardDriver.apply(r, driverContext(opts, id));
    const mine = parseDump(await run('wg', ['show', r.name, 'dump']));
    if (publicOf(mine.privateKey) !== found.public || mine.listenPort !== found.listenPort) {
      throw new Error(`${r.name} came up but does not listen on ${found.listenPort} with the found key`);
    }
  } catch (err) {
    const why = (err as Error).message;
    opts.log(`${r.name} failed to start (${why}); starting ${tunnel} again`);
    if (await linkUp(r.name)) await runAny('ip', ['link', 'delete', 'dev', r.name]);
    const again = await runAny('wg-quick', ['up', found.file], { env: quietEnv() });
    acc.foundTunnel =
      again.code === 0 ? 'started again' : `not started again: ${again.stderr.trim().split('\n').at(-1)}`;
    throw new Error(
      `the mesh's interface ${r.name} failed to start (${why}); ${tunnel} was ${acc.foundTunnel === 'started again' ? 'started again and carries on as before' : `${acc.foundTunnel}: start it by hand with wg-quick up ${tunnel}`}. The key it holds is the overlay key now; fix the cause and take it over again`,
    );
  }
  acc.state = 'taken';
  acc.reason = `${r.name} listens on ${found.listenPort} at ${r.address.split('/')[0]} with ${tunnel}'s key; ${tunnel} is stopped (leave its file: wg-quick up ${tunnel} beside ${r.name} would fight it for the port and the key)`;
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
    stateDir: opts.dir,
    roots: [],
    openSealed: (b) => openSealed(b, sealing),
    overlayKeyPath: overlayKeyPath(opts.dir),
    ...driverSettings(opts.config),
    changed: new Set(),
    log: opts.log,
  };
}

/** The rekey, signed by the identity key, answered by the mesh once recorded (or refused). */
async function tell(
  id: Identity,
  r: { left: string; taken: string; tunnel: string },
  opts: TakeOptions,
): Promise<void> {
  const bytes = writeRekey(
    { node: id.name, left: key32(r.left, 'left'), taken: key32(r.taken, 'taken'), tunnel: r.tunnel },
    key32(id.keys.identity, 'keys.identity'),
  );
  const conn = await connectBroker(
    { ...id.broker, password: id.password },
    { name: `mesh-host overlay take ${id.name}` },
  ).catch((err) => {
    throw new NotTaken(
      `the mesh could not be told (${(err as Error).message}); nothing was stopped or written: run take again when the broker is reachable`,
    );
  });
  try {
    const ch = await conn.createConfirmChannel();
    const correlationId = randomBytes(12).toString('hex');
    const replies = new Promise<ConsumeMessage>((resolve) => {
      void ch.consume(
        'amq.rabbitmq.reply-to',
        (m) => {
          if (m && m.properties.correlationId === correlationId) resolve(m);
        },
        { noAck: true },
      );
    });
    await publish(ch, EXCHANGE, 'rekey', bytes, {
      replyTo: 'amq.rabbitmq.reply-to',
      correlationId,
      userId: id.broker.user,
      mandatory: true,
      persistent: false,
      contentType: 'application/json',
    }).catch((err) => {
      throw new NotTaken(
        `${(err as Error).message}; nothing was stopped or written: run take again once mesh serve runs`,
      );
    });
    const timeout = opts.replyTimeoutMs ?? 60_000;
    const msg = await Promise.race([
      replies,
      new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(
              new NotTaken(
                `the mesh did not answer the rekey within ${timeout / 1000}s (is mesh serve running?); nothing was stopped or written: run take again`,
              ),
            ),
          timeout,
        ).unref(),
      ),
    ]);
    const answer = readRekeyReply(msg.content);
    if (!answer.ok) throw new NotTaken(`${answer.reason}; nothing was stopped or written`);
    opts.log(
      `the mesh recorded ${r.taken} as ${id.name}'s overlay key${answer.outcome === 'again' ? ' (it already had)' : ''}`,
    );
  } finally {
    await conn.close().catch(() => {});
  }
}
