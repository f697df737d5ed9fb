// Publish a forged declaration straight onto a node's queue, as a
// compromised broker (or anyone holding its admin account) could: the right
// mesh id, the right node, a serial far ahead, signed by a key that is not
// the control plane's. The host must refuse it and report it as forged (D1).
// Runs on the first node with MESH_HOME; prints the file the forgery would write.
import { readBroker, readSigner, meshId } from '../src/home/home.js';
import { adminEndpoint } from '../src/broker/admin.js';
import { connectBroker } from '../src/broker/connect.js';
import { publish } from '../src/broker/publish.js';
import { queueOf, nodeName } from '../src/wire/names.js';
import { envelope } from '../src/assignment/declare.js';
import { bodyText, fresh } from '../src/wire/declaration.js';
import { signingPair, signingPublic } from '../src/crypto/keys.js';

const node = nodeName(process.argv[2]);
const path = process.argv[3] ?? '/srv/lab/forged.txt';
const mesh = readSigner().mesh;
const other = signingPair().secret;
const forger = { secret: other, public: signingPublic(other), mesh: meshId(signingPublic(other)) };
const resources = [
  { kind: 'file', id: `file:${path}`, path, content: Buffer.from('forged\n').toString('base64'), mode: '0644' },
];
// The body claims the real mesh: only the signature gives it away.
const bytes = envelope(bodyText(mesh, node, 1_000_000, JSON.stringify(resources), fresh()), forger);
const conn = await connectBroker(adminEndpoint(readBroker()), { name: 'lab forger' });
const ch = await conn.createConfirmChannel();
await publish(ch, '', queueOf(node), bytes, { type: 'declaration', mandatory: true });
await conn.close();
console.log(path);
