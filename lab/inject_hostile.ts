// Publish a declaration signed with the mesh's own key whose firewall
// carries an nft injection in a rule's comment: what a control plane that
// skipped its checks (or a hand-made declaration) would send. The host must
// refuse it as malformed before anything is applied (X2, D1). Runs on the
// first node with MESH_HOME.
import { readBroker, readSigner } from '../src/home/home.js';
import { adminEndpoint } from '../src/broker/admin.js';
import { connectBroker } from '../src/broker/connect.js';
import { queueOf, nodeName } from '../src/wire/names.js';
import { envelope } from '../src/assignment/declare.js';
import { bodyText, fresh } from '../src/wire/declaration.js';

const node = nodeName(process.argv[2]);
const signer = readSigner();
const resources = [
  {
    kind: 'firewall',
    id: 'firewall:mesh',
    name: 'mesh',
    rules: [{ proto: 'tcp', port: 22, why: 'ssh" accept; flush ruleset; add rule inet mesh input accept comment "' }],
  },
];
// A serial far ahead: refused as malformed, it is never recorded as applied,
// so the mesh's next real serial is still newer than anything the host holds.
const bytes = envelope(bodyText(signer.mesh, node, 2_000_000, JSON.stringify(resources), fresh()), signer);
const conn = await connectBroker(adminEndpoint(readBroker()), { name: 'lab hostile rule' });
const ch = await conn.createConfirmChannel();
await new Promise<void>((ok, fail) =>
  ch.publish('', queueOf(node), bytes, { type: 'declaration', persistent: true }, (err) => (err ? fail(err) : ok())),
);
await conn.close();
