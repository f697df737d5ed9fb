// The brokers hosts may dial (inventory 0011, 0012), as mesh_inventory calls them:
// an address is HOST:PORT (MSH10), a fingerprint is SHA-256 as Node prints it
// (MSH11), the node running one is enrolled (MSH13), an unknown one is not
// removed in silence (MSH14), the last one never (MSH12); the home's broker
// recorded by the first put and fingerprints upper-cased; and the list every
// node's composition carries, in address order, only once there is one (W2).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import postgres from 'postgres';
import { openRoles, closeRoles, refusedWith, enrol, type SqlCtx } from '../helpers.js';

const B = suite<SqlCtx>('brokers, as mesh_inventory');
B.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'mq2');
  await enrol(ctx.as, 'web1');
  await ctx.as
    .inventory`select inventory.issue_token(node_name => 'waiting', token_hash => ${Buffer.alloc(32, 9)}::bytea, node_site => null, node_dialable => null, ttl => '1 hour'::interval)`;
});
B.after(async (ctx) => {
  await closeRoles(ctx);
});

/** A fingerprint as X509Certificate.fingerprint256 prints one. */
const fp = (seed: string) => createHash('sha256').update(seed).digest('hex').toUpperCase().match(/../g)!.join(':');
/** The home's broker (broker.json), passed on every put; the first put of this suite is the home itself. */
const HOME = { address: 'mq1.example.net:5671', fingerprint: fp('mq1') };
const putAll = (sql: postgres.Sql, address: string, fingerprint: string, node: string | null = null, home = HOME) =>
  sql`select outcome, fingerprint_pinned, home_recorded from inventory.put_broker(address => ${address}::text, fingerprint => ${fingerprint}::text,
    home_address => ${home.address}::text, home_fingerprint => ${home.fingerprint}::text, node_name => ${node}::text)`.then(
    (r) => ({
      outcome: r[0]!.outcome as string,
      fingerprint: r[0]!.fingerprint_pinned as string,
      home: r[0]!.home_recorded as boolean,
    }),
  );
const put = (sql: postgres.Sql, address: string, fingerprint: string, node: string | null = null) =>
  putAll(sql, address, fingerprint, node).then((r) => r.outcome);
const remove = (sql: postgres.Sql, address: string) => sql`select inventory.remove_broker(address => ${address}::text)`;
const list = async (ctx: SqlCtx) =>
  (await ctx.as.assignment`select address, fingerprint, node from inventory.broker_nodes order by address`).map(
    (r) => ({ ...r }),
  );
const composed = async (ctx: SqlCtx, node: string) =>
  JSON.parse(
    (await ctx.as.assignment`select resources from assignment.compose_each(${[node]}::text[])`)[0]!.resources as string,
  ) as { id: string; kind: string; brokers?: unknown }[];

B('W2: while no broker is recorded, no composition carries a brokers resource', async (ctx) => {
  assert.equal(await list(ctx), []);
  assert.not.ok((await composed(ctx, 'web1')).some((r) => r.kind === 'brokers'));
});

B('a broker address that is not HOST:PORT is refused (MSH10), and nothing is stored', async (ctx) => {
  for (const a of [
    'mq2',
    'mq2:',
    ':5671',
    'mq2:0',
    'mq2:65536',
    'mq2:99999',
    'mq 2:5671',
    'mq2:5671;drop',
    'amqps://mq2:5671',
    '[::1]:5671',
    '',
  ]) {
    await refusedWith(put(ctx.as.inventory, a, fp('x')), 'MSH10');
  }
  await refusedWith(
    ctx.as
      .inventory`select inventory.put_broker(address => null, fingerprint => ${fp('x')}::text, home_address => ${HOME.address}::text, home_fingerprint => ${HOME.fingerprint}::text)`,
    'MSH10',
  );
  assert.equal(await list(ctx), []);
});

B('a fingerprint that is not 32 hex pairs joined by colons is refused (MSH11)', async (ctx) => {
  const good = fp('x');
  for (const f of [
    good.replace(/:/g, ''),
    good.slice(3),
    good + ':AA',
    good.replace(/:/g, '-'),
    'SHA256 Fingerprint=' + good,
    '',
  ]) {
    await refusedWith(put(ctx.as.inventory, 'mq2.example.net:5671', f), 'MSH11');
  }
  assert.equal(await list(ctx), []);
});

B('the node running a broker must be enrolled (MSH13): a token issued is not enough', async (ctx) => {
  await refusedWith(put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2'), 'nobody'), 'MSH13');
  await refusedWith(put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2'), 'waiting'), 'MSH13');
  assert.equal(await list(ctx), []);
});

B(
  "put: added, then unchanged, then changed by a new fingerprint or node; the row's own checks hold even past the function",
  async (ctx) => {
    assert.is(await put(ctx.as.inventory, 'mq1.example.net:5671', fp('mq1')), 'added');
    assert.is(await put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2'), 'mq2'), 'added');
    assert.is(await put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2'), 'mq2'), 'unchanged');
    assert.is(await put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2-renewed'), 'mq2'), 'changed');
    assert.is(await put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2-renewed')), 'changed');
    assert.is(await put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2-renewed'), 'mq2'), 'changed');
    assert.equal(await list(ctx), [
      { address: 'mq1.example.net:5671', fingerprint: fp('mq1'), node: null },
      { address: 'mq2.example.net:5671', fingerprint: fp('mq2-renewed'), node: 'mq2' },
    ]);
    await refusedWith(
      ctx.as.inventory`insert into inventory.broker (address, fingerprint) values ('mq3:70000', ${fp('mq3')})`,
      '23514',
    );
    await refusedWith(
      ctx.as
        .inventory`insert into inventory.broker (address, fingerprint) values ('mq3:5671', ${fp('mq3').toLowerCase()})`,
      '23514',
    );
  },
);

B('W2: every node composes one brokers resource, ordered by address, the same for all', async (ctx) => {
  const want = {
    id: 'brokers',
    kind: 'brokers',
    brokers: [
      { address: 'mq1.example.net:5671', fingerprint: fp('mq1') },
      { address: 'mq2.example.net:5671', fingerprint: fp('mq2-renewed') },
    ],
  };
  for (const node of ['web1', 'mq2']) {
    const b = (await composed(ctx, node)).filter((r) => r.kind === 'brokers');
    assert.equal(b, [want], node);
  }
});

B('a broker the mesh does not know is not removed in silence (MSH14)', async (ctx) => {
  await refusedWith(remove(ctx.as.inventory, 'mq9.example.net:5671'), 'MSH14');
  assert.is((await list(ctx)).length, 2);
});

B('the last broker is never removed (MSH12); of two removals racing for the last two, one is refused', async (ctx) => {
  const a = postgres(ctx.store.url('inventory'), { max: 1, onnotice: () => {} });
  const b = postgres(ctx.store.url('inventory'), { max: 1, onnotice: () => {} });
  try {
    // The race made certain: a's removal is done but not committed when b's begins. With the
    // lock, b waits for a and then finds one broker left; without it b removes the other.
    let second: string | undefined;
    let pending: Promise<string> | undefined;
    await a.begin(async (tx) => {
      await remove(tx as unknown as postgres.Sql, 'mq1.example.net:5671');
      const [me] = await tx`select pg_backend_pid() as pid`;
      pending = remove(b, 'mq2.example.net:5671').then(
        () => 'removed',
        (e) => (e as postgres.PostgresError).code as string,
      );
      void pending.then((o) => {
        second = o;
      });
      for (let i = 0; i < 200 && second === undefined; i++) {
        const [w] = await ctx.store.admin`select count(*)::int as n from pg_stat_activity
                                          where wait_event_type = 'Lock' and ${me!.pid as number} = any(pg_blocking_pids(pid))`;
        if (w!.n > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.is(second, undefined, 'the second removal went ahead while the first was not committed');
    });
    assert.is(await pending, 'MSH12');
  } finally {
    await a.end();
    await b.end();
  }
  const left = await list(ctx);
  assert.is(left.length, 1);
  await refusedWith(remove(ctx.as.inventory, left[0]!.address as string), 'MSH12');
  assert.is((await list(ctx)).length, 1);
});

B('retiring the node that runs a broker keeps the broker, run by no node', async (ctx) => {
  await put(ctx.as.inventory, 'mq2.example.net:5671', fp('mq2'), 'mq2');
  await ctx.as.inventory`select inventory.retire_node(node_name => 'mq2')`;
  assert.equal(
    (await list(ctx)).find((r) => r.address === 'mq2.example.net:5671'),
    { address: 'mq2.example.net:5671', fingerprint: fp('mq2'), node: null },
  );
});

B('only what is granted: assignment reads the view, never the table, and cannot put a broker', async (ctx) => {
  await refusedWith(ctx.as.assignment`select * from inventory.broker`, '42501');
  await refusedWith(put(ctx.as.assignment, 'mq5:5671', fp('mq5')), '42501');
});

B('C3: every broker added, changed and removed is a row of the history, with its fingerprint', async (ctx) => {
  const rows = (
    await ctx.store.admin`select kind, node, detail from audit.event where kind like 'broker-%' order by seq`
  ).map((r) => `${r.kind} ${r.detail.address} ${r.detail.fingerprint === fp('mq2-renewed') ? 'renewed' : '-'}`);
  assert.ok(rows.includes('broker-added mq1.example.net:5671 -'), rows.join('\n'));
  assert.ok(rows.includes('broker-changed mq2.example.net:5671 renewed'), rows.join('\n'));
  assert.ok(
    rows.some((r) => r.startsWith('broker-removed ')),
    rows.join('\n'),
  );
  assert.not.ok(
    rows.some((r) => r.startsWith('broker-changed mq1')),
    'an unchanged put is no history',
  );
});

B('a module carrying a brokers resource is refused in SQL too (MSH31): only the mesh composes it', async (ctx) => {
  await refusedWith(
    ctx.as
      .catalogue`select * from catalogue.put_module(module_name => 'sneaky', module_resources => ${ctx.as.catalogue.json([{ id: 'brokers', kind: 'brokers', brokers: [{ address: 'evil:5671', fingerprint: fp('evil') }] }] as never)}::jsonb, module_origin => 'handed')`,
    'MSH31',
  );
});

B(
  "the first put records the home's broker first, and only while none is recorded; fingerprints are stored upper-case whatever case came",
  async (ctx) => {
    await ctx.store.admin`delete from inventory.broker`;
    const home = { address: 'mq0.example.net:5671', fingerprint: fp('home').toLowerCase() };
    // Pasted in lower case with spaces around: stored as openssl and Node print it.
    assert.equal(await putAll(ctx.as.inventory, 'mq7.example.net:5671', ` ${fp('mq7').toLowerCase()} `, null, home), {
      outcome: 'added',
      fingerprint: fp('mq7'),
      home: true,
    });
    assert.equal(await list(ctx), [
      { address: 'mq0.example.net:5671', fingerprint: fp('home'), node: null },
      { address: 'mq7.example.net:5671', fingerprint: fp('mq7'), node: null },
    ]);
    assert.equal(await putAll(ctx.as.inventory, 'mq8.example.net:5671', fp('mq8'), null, home), {
      outcome: 'added',
      fingerprint: fp('mq8'),
      home: false,
    });
    // The home's broker removed by an operator (the mesh moved off it): a later put does not bring it back.
    await remove(ctx.as.inventory, home.address);
    assert.equal(await putAll(ctx.as.inventory, 'mq9.example.net:5671', fp('mq9'), null, home), {
      outcome: 'added',
      fingerprint: fp('mq9'),
      home: false,
    });
    assert.equal(
      (await list(ctx)).map((r) => r.address),
      ['mq7.example.net:5671', 'mq8.example.net:5671', 'mq9.example.net:5671'],
    );
    // The first put being the home itself records it once.
    await ctx.store.admin`delete from inventory.broker`;
    assert.equal(await putAll(ctx.as.inventory, home.address, fp('home'), null, home), {
      outcome: 'added',
      fingerprint: fp('home'),
      home: false,
    });
    assert.equal(await list(ctx), [{ address: 'mq0.example.net:5671', fingerprint: fp('home'), node: null }]);
  },
);

B('a malformed home broker is refused like any other (MSH10, MSH11), and nothing is stored', async (ctx) => {
  await ctx.store.admin`delete from inventory.broker`;
  await refusedWith(
    putAll(ctx.as.inventory, 'mq7.example.net:5671', fp('mq7'), null, { address: 'mq0', fingerprint: fp('home') }),
    'MSH10',
  );
  await refusedWith(
    putAll(ctx.as.inventory, 'mq7.example.net:5671', fp('mq7'), null, {
      address: 'mq0.example.net:5671',
      fingerprint: 'AA',
    }),
    'MSH11',
  );
  assert.equal(await list(ctx), []);
});

B.run();
