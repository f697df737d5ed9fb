// `mesh builder add NAME`: a broker account for a build machine, scoped to
// read the build queue and write the mesh exchange, and the line to paste on
// that machine. Adding the same name again replaces its password: the old
// line stops working, which is how a leaked one is revoked.
import { randomBytes } from 'node:crypto';
import { Accounts } from '../broker/accounts.js';
import { BUILD_QUEUE, declareTopology } from '../broker/topology.js';
import { readBroker } from '../home/home.js';
import { management, adminTurns } from '../broker/admin.js';
import { nodeName } from '../wire/names.js';
import { writeEnrolLine } from '../wire/builder_line.js';

export async function builderAdd(name: string) {
  nodeName(name, 'builder name');
  const broker = readBroker();
  // The build queue must exist before a builder, which may configure nothing, consumes it.
  const conn = (await adminTurns(broker).connect('mesh builder add')).conn;
  try {
    await declareTopology(conn);
  } finally {
    await conn.close().catch(() => {});
  }
  const password = randomBytes(24).toString('base64url');
  const accounts = new Accounts(management(broker));
  await accounts.createBuilder(name, password, BUILD_QUEUE);
  const user = accounts.builderAccount(name);
  const line = writeEnrolLine({
    broker: broker.public,
    fingerprint: broker.fingerprint,
    vhost: broker.vhost,
    name,
    user,
    password,
    requester: broker.user,
  });
  // The line goes on the build machine's standard input: echo is the shell's own, on no process's command line.
  return { builder: name, account: user, line, command: `echo ${line} | mesh-builder enrol` };
}
