// Enrolment end to end: a real host process, a real `mesh serve`, a real
// RabbitMQ over pinned TLS, a real PostgreSQL.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import amqp from 'amqplib';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { servers } from '../harness/servers.js';
import { readToken, writeToken } from '../../src/wire/token.js';
import { connectBroker } from '../../src/broker/connect.js';
import { loadIdentity } from '../../host/identity.js';
import { NODE_ACCOUNT_LIMITS } from '../../src/broker/accounts.js';

/** Connections a retired node's account still holds when it is retired: as many as it may, beside the host's own. */
const HELD = NODE_ACCOUNT_LIMITS['max-connections'] - 1;
const Enrol = suite<{ mesh: Mesh; serve: Proc }>('enrolment across the real broker');
Enrol.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
Enrol.after(async (ctx) => {
  await ctx.mesh.stop();
});

Enrol(
  'a host enrols: the keys it printed are recorded, the token is spent, the node is here (E2, E4, R4)',
  async ({ mesh }) => {
    const host = mesh.host('web1');
    const r = await host.enrol(await mesh.token('web1', ['--site', 'lon']), ['--json']);
    assert.is(r.code, 0, r.stderr);
    const printed = JSON.parse(r.stdout) as { name: string; keys: Record<string, string> };
    const [row] = await mesh.store
      .admin`select encode(identity_key, 'base64') as identity, encode(overlay_key, 'base64') as overlay,
    encode(sealing_key, 'base64') as sealing, site from inventory.node where name = 'web1'`;
    assert.equal({ identity: row!.identity, overlay: row!.overlay, sealing: row!.sealing }, printed.keys);
    assert.is(row!.site, 'lon');
    const [tok] = await mesh.store.admin`select spent_at from inventory.token where node = 'web1'`;
    assert.ok(tok!.spent_at, 'token spent');
    // E4: the identity is kept, 0600, and holds the password the mesh issued, not the token's secret.
    const idPath = join(host.dir, 'identity.json');
    assert.is(statSync(idPath).mode & 0o777, 0o600);
    const id = JSON.parse(readFileSync(idPath, 'utf8'));
    assert.is.not(id.password, readToken(await mesh.token('spare')).secret);
    const proc = host.run();
    await proc.waitFor(/connected to 127\.0\.0\.1/);
    const status = await mesh.store.admin`select state from inventory.node_status where name = 'web1'`;
    assert.is(status[0]!.state, 'here');
    const list = await mesh.cli(['node', 'list', '--json']);
    assert.is(list.code, 0, list.stderr);
    const node = (JSON.parse(list.stdout) as { name: string; state: string }[]).find((n) => n.name === 'web1');
    assert.is(node?.state, 'here');
    const human = await mesh.cli(['node', 'list']);
    assert.match(human.stdout, /web1\s+lon\s+here/);
    await proc.stop();
  },
);

Enrol('an enrolled host refuses a valid token rather than take a second identity (E4)', async ({ mesh }) => {
  const host = mesh.host('web2');
  assert.is((await host.enrol(await mesh.token('web2'))).code, 0);
  const before = readFileSync(join(host.dir, 'identity.json'), 'utf8');
  const r = await host.enrol(await mesh.token('web3'));
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /already enrolled as web2.*mesh node retire web2.*\(MSHG8\)\./);
  assert.is(readFileSync(join(host.dir, 'identity.json'), 'utf8'), before);
  const [n] = await mesh.store.admin`select enrolled_at from inventory.node where name = 'web3'`;
  assert.is(n!.enrolled_at, null);
});

Enrol('a spent token is refused', async ({ mesh }) => {
  const token = await mesh.token('web4');
  assert.is((await mesh.host('web4').enrol(token)).code, 0);
  const r = await mesh.host('web4').enrol(token);
  assert.is.not(r.code, 0);
  assert.match(
    r.stderr,
    /refused this token's account \(web4\) with the token's secret and with the password this machine chose.*\(MSHG9\)\./,
  );
});

Enrol('every refusal tells the node one thing; the operator log says which (E3)', async ({ mesh, serve }) => {
  const token = await mesh.token('web5', ['--ttl', '1s']);
  await new Promise((r) => setTimeout(r, 1500));
  const mark = serve.output().length;
  const host = mesh.host('web5');
  const r = await host.enrol(token);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /this token cannot be used: ask the operator for a new one.*\(MSHI4\)\./);
  assert.not.match(r.stderr, /expired/);
  assert.not.ok(existsSync(join(host.dir, 'identity.json')), 'E4: a host the mesh refused keeps no identity');
  await serve.waitFor(/enrol: refused web5: token expired/, 10_000, mark);
});

Enrol('a host given a wrong fingerprint refuses the broker and says so in full (L2)', async ({ mesh }) => {
  const t = readToken(await mesh.token('web6'));
  const wrong = writeToken({
    ...t,
    fingerprint: t.fingerprint.replace(/^../, t.fingerprint.startsWith('AA') ? 'BB' : 'AA'),
  });
  const r = await mesh.host('web6').enrol(wrong);
  assert.is.not(r.code, 0);
  assert.match(
    r.stderr,
    /presented certificate [0-9A-F:]{95}, but this node pins [0-9A-F:]{95}.*not the mesh this node joined/,
  );
  const [n] = await mesh.store.admin`select enrolled_at from inventory.node where name = 'web6'`;
  assert.is(n!.enrolled_at, null, 'nothing was said to the wrong broker');
});

Enrol("a node account cannot read another node's queue: 403 from the real broker", async ({ mesh }) => {
  const a = readToken(await mesh.token('alpha'));
  await mesh.token('beta');
  const s = servers();
  const conn = await amqp.connect(
    {
      protocol: 'amqps',
      hostname: '127.0.0.1',
      port: s.rabbit.amqpsPort,
      username: a.user,
      password: a.secret,
      vhost: a.vhost,
    },
    { rejectUnauthorized: false },
  );
  try {
    const ch = await conn.createChannel();
    const refused = new Promise<string>((resolve) => ch.on('error', (e: Error) => resolve(e.message)));
    ch.consume('node.beta', () => {}).catch(() => {});
    assert.match(await refused, /403|ACCESS_REFUSED|ACCESS-REFUSED/);
    const ch2 = await conn.createChannel();
    await ch2.consume('node.alpha', () => {});
    await ch2.close();
  } finally {
    await conn.close().catch(() => {});
  }
});

Enrol('names that could widen a permission pattern are refused at issue time', async ({ mesh }) => {
  for (const name of ['a.*', 'x|y', 'Web1', '../etc', 'a'.repeat(64)]) {
    const r = await mesh.cli(['token', 'issue', name]);
    assert.is.not(r.code, 0, name);
    assert.match(r.stderr, /is not allowed: use a lower-case letter.*\(MSHF2\)/);
  }
  const [n] = await mesh.store
    .admin`select count(*)::int as n from inventory.node where name !~ '^[a-z][a-z0-9-]{0,62}$'`;
  assert.is(n!.n, 0);
});

Enrol('retire removes the account and the queue, and closes every connection the account holds', async ({ mesh }) => {
  const { host, proc } = await mesh.joined('gamma');
  // Connections of the node's own that do not leave when its queue goes (the
  // host does): a machine taken, kept open to publish as the node. Several, so
  // the broker is still closing some (it closes a deleted user's connections
  // itself) when retire asks it to close them all: retire still succeeds.
  const id = loadIdentity(host.dir)!;
  const held = await Promise.all(
    Array.from({ length: HELD }, (_, i) =>
      connectBroker({ ...id.broker, password: id.password }, { name: `held by a retired node ${i}` }),
    ),
  );
  const closed = held.map((c) => new Promise<void>((resolve) => c.once('close', () => resolve())));
  const r = await mesh.cli(['node', 'retire', 'gamma']);
  assert.is(r.code, 0, r.stderr);
  const q = await mesh.mgmt('GET', `/queues/${mesh.vhost}/node.gamma`);
  assert.is(q.status, 404);
  const u = await mesh.mgmt('GET', `/users/${encodeURIComponent(mesh.prefix + 'node.gamma')}`);
  assert.is(u.status, 404);
  await proc.waitFor(/lost the broker|cannot reach/, 20_000);
  await proc.stop();
  let timer: NodeJS.Timeout | undefined;
  const gone = await Promise.race([
    Promise.all(closed).then(() => true),
    new Promise<boolean>((res) => {
      timer = setTimeout(() => res(false), 10_000);
    }),
  ]);
  clearTimeout(timer);
  if (!gone) await Promise.all(held.map((c) => c.close().catch(() => {})));
  assert.ok(gone, "the retired account's own connections were left open");
});

Enrol.run();

const Status = suite<{ mesh: Mesh }>('node status (R4)');
Status.before(async (ctx) => {
  ctx.mesh = await freshMesh();
});
Status.after(async (ctx) => {
  await ctx.mesh.stop();
});

Status('here, out of touch Nm, never spoken: in SQL and in node list', async ({ mesh }) => {
  const a = mesh.store.admin;
  await a`insert into inventory.node (name, identity_key, overlay_key, sealing_key, enrolled_at, last_seen) values
    ('fresh', ${Buffer.alloc(32, 1)}, ${Buffer.alloc(32, 2)}, ${Buffer.alloc(32, 3)}, now(), now() - interval '20 seconds'),
    ('stale', ${Buffer.alloc(32, 4)}, ${Buffer.alloc(32, 5)}, ${Buffer.alloc(32, 6)}, now(), now() - interval '4 minutes 10 seconds')`;
  await a`insert into inventory.node (name) values ('unborn')`;
  const rows = await a`select name, state from inventory.node_status order by name`;
  assert.equal(
    rows.map((r) => [r.name, r.state]),
    [
      ['fresh', 'here'],
      ['stale', 'out of touch 4m'],
      ['unborn', 'never spoken'],
    ],
  );
  const list = await mesh.cli(['node', 'list']);
  assert.match(list.stdout, /stale\s+default\s+out of touch 4m/);
  assert.match(list.stdout, /unborn\s+default\s+never spoken/);
});

Status('E1: of 50 concurrent spends of one token exactly one succeeds', async ({ mesh }) => {
  const a = mesh.store.admin;
  const secret = 'one-time';
  const hash = createHash('sha256').update(secret).digest();
  await a`select inventory.issue_token('racer', ${hash}, null, null, interval '1 hour')`;
  const url = mesh.store.url('inventory');
  const postgres = (await import('postgres')).default;
  const sql = postgres(url, { max: 50, onnotice: () => {} });
  try {
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sql`select inventory.spend_token(${hash}::bytea, 'racer', ${Buffer.alloc(32, i + 1)}::bytea, ${Buffer.alloc(32, 100)}::bytea, ${Buffer.alloc(32, 101)}::bytea) as o`.then(
          (r) => r[0]!.o as string,
        ),
      ),
    );
    assert.is(outcomes.filter((o) => o === 'enrolled').length, 1, outcomes.join(','));
    assert.is(outcomes.filter((o) => o === 'token already spent').length, 49);
  } finally {
    await sql.end();
  }
  const [n] = await a`select encode(identity_key, 'hex') as k from inventory.node where name = 'racer'`;
  assert.ok(n!.k, 'one identity recorded');
});

Status('tokens are stored hashed: the secret appears nowhere in the database', async ({ mesh }) => {
  const t = readToken(await mesh.token('hidden'));
  const dump = await mesh.store.admin`select row_to_json(t)::text as j from inventory.token t where node = 'hidden'`;
  assert.ok(dump.length === 1);
  assert.not.ok(dump[0]!.j.includes(t.secret));
  assert.not.ok(dump[0]!.j.includes(Buffer.from(t.secret).toString('hex')));
});

Status.run();
