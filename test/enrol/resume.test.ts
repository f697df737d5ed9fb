// An enrolment in flight when its broker goes: serve set the
// account's password to the one the host chose, and the host never read the
// welcome. The host kept its keys and password in a pending file before
// sending, so it dials again with that password, sends the same request
// (serve answers 'again') and completes; the token is spent once. Made certain,
// not raced: serve is held (SIGSTOP) until the request is sent, then a relay
// in front of the broker holds what the broker sends while serve answers, and
// cuts the connection. Each way an enrolment ends without an identity is
// refused with its own code.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, writeFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { held, freshMesh, spawnProc, runCli, MESH_HOST, type Mesh, type Proc } from '../harness/mesh.js';
import { holdProxy } from '../harness/hold_proxy.js';
import { readToken, writeToken } from '../../src/wire/token.js';
import type { ConsumeMessage } from 'amqplib';
import { connectBroker } from '../../src/broker/connect.js';
import { splitHostPort } from '../../src/wire/names.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { publish } from '../../src/broker/publish.js';
import { adminEndpoint } from '../../src/broker/admin.js';
import { queueOf } from '../../src/wire/names.js';
import { writeEnrolRequest, readEnrolReply, REFUSAL } from '../../src/wire/enrol.js';
import { b64, key32, signingPublic, agreementPublic, nodeKeys } from '../../src/crypto/keys.js';
import { loadIdentity } from '../../host/identity.js';
import { pendingPath } from '../../host/enrol_pending.js';

const R = suite<{ mesh: Mesh; serve: Proc }>('an enrolment in flight when its broker goes, resumed');
R.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
R.after(async (ctx) => {
  await ctx.mesh?.stop();
});

interface Kept {
  password: string;
  keys: { identity: string; overlay: string; sealing: string };
}
/** The pending file: secret keys and the chosen broker password, so 0600 whenever it is read (E4). */
const kept = (dir: string) => {
  assert.is(statSync(pendingPath(dir)).mode & 0o777, 0o600, 'the pending enrolment file is 0600');
  return JSON.parse(readFileSync(pendingPath(dir), 'utf8')) as Kept;
};
const exited = async (p: Proc) => (await p.exited(60_000)) ?? -1;

/** The public keys SQL recorded for NODE, and those of the secret halves the host kept. */
async function recorded(mesh: Mesh, node: string) {
  const [row] = await mesh.store
    .admin`select encode(identity_key, 'base64') as identity, encode(overlay_key, 'base64') as overlay,
    encode(sealing_key, 'base64') as sealing from inventory.node where name = ${node}`;
  return { identity: row!.identity as string, overlay: row!.overlay as string, sealing: row!.sealing as string };
}
const publicOf = (k: Kept['keys']) => ({
  identity: b64(signingPublic(key32(k.identity, 'identity'))),
  overlay: b64(agreementPublic(key32(k.overlay, 'overlay'))),
  sealing: b64(agreementPublic(key32(k.sealing, 'sealing'))),
});

async function spentOnce(mesh: Mesh, node: string): Promise<void> {
  const [t] = await mesh.store
    .admin`select count(*)::int as n from inventory.token where node = ${node} and spent_at is not null`;
  assert.is(t!.n, 1, 'one token spent');
}

R(
  'the broker lost after serve set the password, before the welcome was read: enrol dials again with the password it chose and completes, the token spent once, SQL said again (E1, E4)',
  async ({ mesh, serve }) => {
    const proxy = await holdProxy(splitHostPort(mesh.broker.public));
    try {
      const t = readToken(await mesh.token('res1'));
      const token = writeToken({
        ...t,
        broker: proxy.address,
        brokers: [{ address: proxy.address, fingerprint: t.fingerprint }],
      });
      const host = mesh.host('res1');
      const mark = serve.output().length;
      let p!: Proc;
      await held(serve, async () => {
        p = spawnProc(process.execPath, [MESH_HOST, 'enrol'], host.env, token);
        await p.waitFor(/sent the enrolment request of res1 through/);
        // From here on nothing the broker sends reaches the host: serve's welcome is lost with the connection.
        proxy.hold();
      });
      await serve.waitFor(/enrol: res1 enrolled/, 20_000, mark);
      const k = kept(host.dir);
      proxy.cut();
      assert.is(await exited(p), 0, p.output());
      assert.match(p.output(), /lost the broker at 127\.0\.0\.1:\d+ before the answer came/);
      assert.match(
        p.output(),
        /the token's secret no longer logs in as res1: dialling with the broker password this machine chose/,
      );
      const id = loadIdentity(host.dir)!;
      assert.equal(id.keys, k.keys, 'the keys it kept before sending');
      assert.is(id.password, k.password, 'the password it chose');
      assert.equal(await recorded(mesh, 'res1'), publicOf(k.keys));
      assert.not.ok(existsSync(pendingPath(host.dir)), 'the pending file goes once the identity is kept');
      await serve.waitFor(/enrol: res1 asked again and was answered again/, 20_000, mark);
      assert.is(
        serve
          .output()
          .slice(mark)
          .match(/enrol: res1 enrolled/g)!.length,
        1,
      );
      await spentOnce(mesh, 'res1');
      // The account takes the password it kept: the host's own link gets in.
      const run = host.run();
      await run.waitFor(/connected to 127\.0\.0\.1/);
      await run.stop();
    } finally {
      await proxy.close();
    }
  },
);

R(
  'mesh-host enrol killed while it waited: the same command again resumes with the keys and password it kept and completes (E4)',
  async ({ mesh, serve }) => {
    const token = await mesh.token('res2');
    const host = mesh.host('res2');
    const mark = serve.output().length;
    const k = await held(serve, async () => {
      const p = spawnProc(process.execPath, [MESH_HOST, 'enrol'], host.env, token);
      await p.waitFor(/sent the enrolment request of res2 through/);
      await p.stop('SIGKILL');
      return kept(host.dir);
    });
    await serve.waitFor(/enrol: res2 enrolled/, 20_000, mark);
    const r = await host.enrol(token);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, /resuming the enrolment of res2 begun before with this token/);
    const id = loadIdentity(host.dir)!;
    assert.equal(id.keys, k.keys);
    assert.is(id.password, k.password);
    assert.equal(await recorded(mesh, 'res2'), publicOf(k.keys));
    assert.not.ok(existsSync(pendingPath(host.dir)));
    await spentOnce(mesh, 'res2');
  },
);

R(
  'a different token replaces the pending enrolment and says so: new keys, the old request refused',
  async ({ mesh, serve }) => {
    const first = await mesh.token('res3');
    const host = mesh.host('res3');
    const mark = serve.output().length;
    let second = '';
    const k = await held(serve, async () => {
      const p = spawnProc(process.execPath, [MESH_HOST, 'enrol'], host.env, first);
      await p.waitFor(/sent the enrolment request of res3 through/);
      await p.stop('SIGKILL');
      // A new token replaces the unspent one before any serve reads the first request.
      second = await mesh.token('res3');
      return kept(host.dir);
    });
    const r = await host.enrol(second);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, /replacing the pending enrolment of res3 in \S+: it was begun with another token/);
    const id = loadIdentity(host.dir)!;
    assert.is.not(id.keys.identity, k.keys.identity, 'new keys');
    assert.is.not(id.password, k.password, 'a new password');
    assert.equal(await recorded(mesh, 'res3'), publicOf(id.keys));
    await serve.waitFor(/enrol: refused res3: unknown token/, 20_000, mark);
    await spentOnce(mesh, 'res3');
  },
);

R(
  'no answer in time is MSHI3, and the same command later resumes; a bad MESH_HOST_ENROL_SECONDS is MSHG4',
  async ({ mesh, serve }) => {
    const token = await mesh.token('res4');
    const host = mesh.host('res4');
    const bad = await runCli(MESH_HOST, ['enrol'], { ...host.env, MESH_HOST_ENROL_SECONDS: 'soon' }, token);
    assert.is.not(bad.code, 0);
    assert.match(bad.stderr, /MESH_HOST_ENROL_SECONDS must be a positive number of seconds.*\(MSHG4\)\./);
    const r = await held(serve, () =>
      runCli(MESH_HOST, ['enrol'], { ...host.env, MESH_HOST_ENROL_SECONDS: '2' }, token),
    );
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /no answer from the control plane within 2s.*\(MSHI3\)\./);
    assert.ok(existsSync(pendingPath(host.dir)), 'the pending file stays for the next try');
    kept(host.dir); // and stays 0600 while it waits
    const again = await host.enrol(token);
    assert.is(again.code, 0, again.stderr);
    assert.match(again.stderr, /resuming the enrolment of res4/);
    await spentOnce(mesh, 'res4');
  },
);

R(
  'a pending file that cannot be read is refused with MSHK6, kept as it was, and nothing is sent: it may hold an enrolment the mesh accepted (E4)',
  async ({ mesh, serve }) => {
    const token = await mesh.token('res9');
    const host = mesh.host('res9');
    mkdirSync(host.dir, { recursive: true, mode: 0o700 });
    const damaged = '{"v": 1, "node": "res9", "password": "cut short';
    writeFileSync(pendingPath(host.dir), damaged, { mode: 0o600 });
    const mark = serve.output().length;
    const r = await host.enrol(token);
    assert.is.not(r.code, 0);
    assert.match(
      r.stderr,
      /enrolment\.pending\.json cannot be read \(.+\): it holds an enrolment in flight.*to start over: remove \S+enrolment\.pending\.json; if mesh node list shows res9 enrolled, run mesh node retire res9 .*\(MSHK6\)\./s,
    );
    assert.is(readFileSync(pendingPath(host.dir), 'utf8'), damaged, 'the file is kept as it was');
    assert.is(loadIdentity(host.dir), null, 'no identity');
    assert.not.match(serve.output().slice(mark), /res9/, 'nothing was sent');
    // Removed deliberately, the same token starts over and completes.
    rmSync(pendingPath(host.dir));
    const again = await host.enrol(token);
    assert.is(again.code, 0, again.stderr);
    await spentOnce(mesh, 'res9');
  },
);

R(
  "a reply to another enrolment, with this machine its queue's only reader, is dropped, not requeued to bounce back until the welcome",
  async ({ mesh }) => {
    const token = await mesh.token('res10');
    const host = mesh.host('res10');
    const q = `/queues/${encodeURIComponent(mesh.vhost)}/${queueOf('res10')}`;
    // A reply nobody reads: to an enrolment whose pending file was removed, say.
    const put = await mesh.mgmt('POST', `/exchanges/${encodeURIComponent(mesh.vhost)}/amq.default/publish`, {
      properties: { correlation_id: 'nobodys', type: 'enrol-reply' },
      routing_key: queueOf('res10'),
      payload: '{}',
      payload_encoding: 'string',
    });
    assert.equal(await put.json(), { routed: true });
    const r = await host.enrol(token);
    assert.is(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /dropped a reply to another enrolment of res10 \(correlation id nobodys\): this machine is its queue's only reader/,
    );
    // What the queue holds now (a declaration sent after the welcome waits for mesh-host run): never the stray reply.
    const held = (await (
      await mesh.mgmt('POST', `${q}/get`, { count: 100, ackmode: 'ack_requeue_true', encoding: 'auto' })
    ).json()) as { properties: { correlation_id?: string } }[];
    assert.equal(
      held.filter((m) => m.properties.correlation_id === 'nobodys'),
      [],
      'the stray reply is gone from the queue',
    );
  },
);

R(
  'a reply to another enrolment goes back to the queue while another reader (a machine trying the same token) consumes it',
  async ({ mesh }) => {
    const token = await mesh.token('res11');
    const host = mesh.host('res11');
    const q = `/queues/${encodeURIComponent(mesh.vhost)}/${queueOf('res11')}`;
    const toQueue = async (props: Record<string, string>) => {
      const put = await mesh.mgmt('POST', `/exchanges/${encodeURIComponent(mesh.vhost)}/amq.default/publish`, {
        properties: props,
        routing_key: queueOf('res11'),
        payload: '{}',
        payload_encoding: 'string',
      });
      assert.equal(await put.json(), { routed: true });
    };
    // The contender reads the queue and holds the first message it gets (prefetch 1): every message after it,
    // the reply to the contender's enrolment too, is delivered to the host, which must give it back.
    const conn = await connectBroker(adminEndpoint(mesh.broker), { name: 'a contender' });
    try {
      const ch = await conn.createChannel();
      await ch.prefetch(1);
      await toQueue({ type: 'held' });
      await new Promise<void>((resolve) => {
        void ch.consume(queueOf('res11'), (m) => {
          if (m) resolve();
        });
      });
      await toQueue({ correlation_id: 'contenders', type: 'enrol-reply' });
      const r = await host.enrol(token);
      assert.is(r.code, 0, r.stderr);
      assert.not.match(r.stderr, /dropped a reply/);
    } finally {
      await conn.close().catch(() => {});
    }
    const held = (await (
      await mesh.mgmt('POST', `${q}/get`, { count: 100, ackmode: 'ack_requeue_true', encoding: 'auto' })
    ).json()) as { properties: { correlation_id?: string } }[];
    assert.is(
      held.filter((m) => m.properties.correlation_id === 'contenders').length,
      1,
      'the reply waits for its reader',
    );
  },
);

R(
  "a request with a weak password is told the one refusal and spends nothing; serve's log says which (E3)",
  async ({ mesh, serve }) => {
    const t = readToken(await mesh.token('res8'));
    const b = t.brokers[0]!;
    const mark = serve.output().length;
    const conn = await connectBroker(
      { ...splitHostPort(b.address), vhost: t.vhost, user: t.user, password: t.secret, fingerprint: b.fingerprint },
      { name: 'a weak password' },
    );
    try {
      const ch = await conn.createConfirmChannel();
      const reply = new Promise<ConsumeMessage>((resolve) => {
        void ch.consume(queueOf('res8'), (m) => {
          if (m) {
            ch.ack(m);
            resolve(m);
          }
        });
      });
      await publish(ch, EXCHANGE, 'enrol', writeEnrolRequest('res8', t.secret, 'hunter2', nodeKeys()), {
        mandatory: true,
        userId: t.user,
        correlationId: 'weak',
        contentType: 'application/json',
      });
      assert.equal(readEnrolReply((await reply).content), REFUSAL);
    } finally {
      await conn.close().catch(() => {});
    }
    await serve.waitFor(
      /enrol: refused res8: malformed request: enrolment request carries a weak broker password/,
      20_000,
      mark,
    );
    const [n] = await mesh.store.admin`select enrolled_at from inventory.node where name = 'res8'`;
    assert.is(n!.enrolled_at, null, 'the token is not spent by a refused request');
  },
);

R('a broker that will not take the request (nacked) is MSHI2', async ({ mesh, serve }) => {
  // No serve from here on: what is sent stays in mesh.control.
  await serve.stop();
  const at = `/policies/${encodeURIComponent(mesh.vhost)}/full`;
  const put = await mesh.mgmt('PUT', at, {
    pattern: '^mesh\\.control$',
    definition: { 'max-length': 0, overflow: 'reject-publish' },
    'apply-to': 'queues',
    priority: 100,
  });
  assert.ok(put.ok, `policy: ${put.status}`);
  try {
    // Until the queue carries it (a policy is applied to its queues after the PUT returns).
    for (;;) {
      const q = (await (await mesh.mgmt('GET', `/queues/${encodeURIComponent(mesh.vhost)}/mesh.control`)).json()) as {
        policy?: string;
      };
      if (q.policy === 'full') break;
      await new Promise((res) => setTimeout(res, 200));
    }
    // A quorum queue takes the message that carries it over its limit and refuses the ones after: one request first.
    const first = mesh.host('res5');
    await runCli(MESH_HOST, ['enrol'], { ...first.env, MESH_HOST_ENROL_SECONDS: '2' }, await mesh.token('res5'));
    const r = await mesh.host('res7').enrol(await mesh.token('res7'));
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /the broker did not accept the enrolment request.*\(MSHI2\)\./);
  } finally {
    await mesh.mgmt('DELETE', at);
  }
});

R('no control queue to take the request is MSHI1', async ({ mesh, serve }) => {
  await serve.stop(); // stopped already: the queue has no consumer
  const del = await mesh.mgmt('DELETE', `/queues/${encodeURIComponent(mesh.vhost)}/mesh.control`);
  assert.ok(del.ok, `delete: ${del.status}`);
  const r = await mesh.host('res6').enrol(await mesh.token('res6'));
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /the broker has no control queue to take the enrolment request.*\(MSHI1\)\./);
});

R.run();
