// `mesh-builder enrol <line>`: check the line's credential against the broker
// (pinned to the line's fingerprint) and keep it, 0600. From then on
// `mesh-builder run` reads it from its state file; it is never on a command
// line again. An enrolled builder refuses a second line rather than silently
// become another builder.
import { readEnrolLine } from '../wire/builder_line.js';
import { connectBroker } from '../broker/connect.js';
import { splitHostPort } from '../wire/names.js';
import { BUILD_QUEUE } from '../broker/topology.js';
import { loadCredential, saveCredential, credentialPath, type Credential } from './credential.js';
import { refuse } from '../sys/errors.js';

export async function enrolBuilder(lineText: string, dir: string): Promise<{ name: string; broker: string }> {
  const existing = loadCredential(dir);
  if (existing) {
    throw refuse(
      'MSHP1',
      `this machine is already enrolled as builder ${existing.name}`,
      `to enrol it again, remove ${credentialPath(dir)} first`,
    );
  }
  const line = readEnrolLine(lineText);
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
  } finally {
    await conn.close().catch(() => {});
  }
  await saveCredential(dir, cred);
  return { name: cred.name, broker: line.broker };
}
