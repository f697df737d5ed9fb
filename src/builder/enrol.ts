// `mesh-builder enrol` (the line on stdin): check the line's credential against the broker
// (pinned to the line's fingerprint), replace its password with one this
// machine chooses (B3: the printed line, which sat in a terminal, stops
// working, as a node's token does), and keep the credential, 0600. From then
// on `mesh-builder run` reads it from its state file; it is never on a
// command line. An enrolled builder refuses a second line rather than
// silently become another builder.
import { randomBytes } from 'node:crypto';
import { readEnrolLine, writeBuilderEnrol, BUILDER_ENROL } from '../wire/builder_line.js';
import { connectBroker } from '../broker/connect.js';
import { splitHostPort } from '../wire/names.js';
import { BUILD_QUEUE, EXCHANGE } from '../broker/topology.js';
import { publish } from '../broker/publish.js';
import { loadCredential, saveCredential, credentialPath, type Credential } from './credential.js';
import { refuse } from '../sys/errors.js';

export async function enrolBuilder(
  lineText: string,
  dir: string,
  opts: { timeoutMs?: number } = {},
): Promise<{ name: string; broker: string }> {
  const existing = loadCredential(dir);
  if (existing) {
    throw refuse(
      'MSHP1',
      `this machine is already enrolled as builder ${existing.name}`,
      `to enrol it again, remove ${credentialPath(dir)} first`,
    );
  }
  const line = readEnrolLine(lineText);
  const chosen = randomBytes(32).toString('base64url');
  const { host, port } = splitHostPort(line.broker);
  const cred: Credential = {
    v: 1,
    name: line.name,
    password: line.password,
    requester: line.requester,
    broker: { host, port, vhost: line.vhost, user: line.user, fingerprint: line.fingerprint },
  };
  const conn = await connectBroker(
    { ...cred.broker, password: cred.password },
    { name: `mesh-builder enrol ${line.name}` },
  ).catch((err) => {
    const m = (err as Error).message;
    if (m.includes('ACCESS_REFUSED') || m.includes('403')) {
      throw refuse(
        'MSHP2',
        `the broker refused builder ${line.name}'s account: the line was replaced`,
        `mesh builder add ${line.name} again makes a new one`,
        err,
      );
    }
    throw err;
  });
  try {
    // A refused checkQueue closes the channel, and amqplib also emits it as an 'error'
    // that, unheard, ends the process before the refusal below is said.
    conn.on('error', () => {});
    const ch = await conn.createChannel();
    ch.on('error', () => {});
    await ch.checkQueue(BUILD_QUEUE).catch((err) => {
      throw refuse(
        'MSHP3',
        `the broker has no ${BUILD_QUEUE} queue this account may read`,
        `run mesh builder add ${line.name} on the control plane again`,
        err,
      );
    });
    // The line's password was printed: the control plane sets the account to one chosen here.
    const confirm = await conn.createConfirmChannel();
    confirm.on('error', () => {});
    await publish(confirm, EXCHANGE, BUILDER_ENROL, writeBuilderEnrol(chosen), {
      mandatory: true,
      userId: line.user,
      contentType: 'application/json',
      type: BUILDER_ENROL,
    });
  } finally {
    await conn.close().catch(() => {});
  }
  await waitForPassword(cred, chosen, opts.timeoutMs ?? 60_000);
  await saveCredential(dir, { ...cred, password: chosen });
  return { name: cred.name, broker: line.broker };
}

// Not unref'd: while serve has not set the password, this wait is all that keeps the command alive.
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Until the broker takes the chosen password (serve has set it), or the time is up. */
async function waitForPassword(cred: Credential, chosen: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const conn = await connectBroker(
        { ...cred.broker, password: chosen },
        { name: `mesh-builder enrol ${cred.name}` },
      );
      await conn.close().catch(() => {});
      return;
    } catch (err) {
      if (Date.now() >= deadline)
        throw refuse(
          'MSHU8',
          `the control plane did not replace builder ${cred.name}'s password within ${timeoutMs / 1000}s`,
          `check mesh serve is running; the line may no longer work: mesh builder add ${cred.name} makes a new one`,
          err,
        );
      await sleep(500);
    }
  }
}
