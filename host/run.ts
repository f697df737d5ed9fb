// `mesh-host run`: wait for an identity (L4), then hold the link (L1-L3), say
// it is there once a minute (R3), and hand every message on its own queue to
// the agent, which verifies, applies, keeps and reports (agent.ts).
import type { ConfirmChannel } from 'amqplib';
import { queueOf } from '../src/wire/names.js';
import { waitForIdentity } from './wait.js';
import { loadIdentity, type Identity, type BrokerAddress } from './identity.js';
import { Link } from './link/link.js';
import { setLogNode, type LogFields } from '../src/sys/log.js';
import { Notifier } from '../src/sys/notify.js';
import { publishHeard } from './heard.js';
import type { HostConfig } from './config.js';
import { Agent, RESTART_CODE } from './agent.js';
import { writePidFile, removePidFile } from './link/pidfile.js';

export interface RunOptions {
  config: HostConfig;
  log(line: string, fields?: LogFields): void;
  signal?: AbortSignal;
}

export async function runHost(opts: RunOptions): Promise<void> {
  // Taken before anything else: with no listener, node takes SIGUSR1 as "open
  // the inspector on 127.0.0.1:9229", and a dispatcher rouses on every link-up,
  // also while this host waits to be enrolled. Nothing may listen on a node.
  let link: Link | undefined;
  const rouse = () =>
    link ? link.rouse() : opts.log('roused before this machine is enrolled: nothing to link to yet');
  process.on('SIGUSR1', rouse);
  // Only now may a dispatcher hook find us (bundle/hooks/50-mesh-host-rouse).
  const pidFile = opts.config.pidFile;
  writePidFile(pidFile);
  // Ready once running: waiting to be enrolled is this host running as designed.
  const notifier = new Notifier(undefined, opts.log);
  notifier.ready();
  try {
    await holdLink(opts, notifier, (l) => {
      link = l;
    });
  } finally {
    removePidFile(pidFile);
    process.off('SIGUSR1', rouse);
  }
}

async function holdLink(opts: RunOptions, notifier: Notifier, linked: (l: Link) => void): Promise<void> {
  const wait = Math.min(5000, notifier.everyMs ?? 5000);
  const id = await waitForIdentity(opts.config.dir, opts.log, wait, opts.signal, () => notifier.alive());
  if (!id) return;
  setLogNode(id.name);
  const agent = new Agent(id, opts.config, opts.log);
  await agent.start();
  if (notifier.everyMs) agent.feedWatchdog(() => notifier.alive(), notifier.everyMs);
  let heard: NodeJS.Timeout | undefined;
  const link = new Link(
    id,
    opts.config.backoff,
    {
      log: opts.log,
      connected: async (conn) => {
        const ch: ConfirmChannel = await conn.createConfirmChannel();
        ch.on('error', () => {});
        await agent.attach(ch);
        await ch.prefetch(256);
        // No message: the broker cancelled us (this node's queue was made again, a quorum
        // queue on a broker cluster): connect again, which asks for the newest (recover).
        await ch.consume(queueOf(id.name), (msg) => {
          if (msg) agent.receive(msg);
          else {
            opts.log("this node's queue was made again; connecting again");
            void conn.close().catch(() => {});
          }
        });
        publishHeard(ch, id.name, id.broker.user);
        heard = setInterval(() => {
          try {
            publishHeard(ch, id.name, id.broker.user);
          } catch {
            /* link gone: the link says so */
          }
        }, opts.config.heardSeconds * 1000);
      },
      lost: () => {
        clearInterval(heard);
        agent.detach();
      },
    },
    () => currentBrokers(opts, id),
  );
  linked(link);
  const stop = () => {
    link.stop();
    agent.stop();
  };
  // V2: the agent ends itself to restart into another package, or to hand a failed upgrade to the guard.
  agent.onExit((code) => {
    opts.log(
      `ending with ${code}: ${code === RESTART_CODE ? 'to be started again from the current package' : 'the guard decides what starts next'}`,
    );
    process.exitCode = code;
    stop();
    setTimeout(() => process.exit(code), 5000).unref();
  });
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  opts.signal?.addEventListener('abort', stop);
  try {
    await link.run();
  } finally {
    clearInterval(heard);
    await agent.stopped();
  }
}

/**
 * The brokers to try, read from identity.json at each attempt: a brokers
 * resource applied since (host/apply/brokers.ts) counts from the next one.
 * A file that cannot be read now is said, and the list held before is used.
 */
function currentBrokers(opts: RunOptions, id: Identity): BrokerAddress[] {
  try {
    const now = loadIdentity(opts.config.dir);
    if (now) id.brokers = now.brokers;
  } catch (err) {
    opts.log(`keeping the brokers known before: ${(err as Error).message}`);
  }
  return id.brokers;
}
