// `mesh declare` for a fleet large enough to compose in parts (2,000 nodes:
// src/assignment/compose_parts.ts), on a real store: every node gets exactly
// one declaration, serial 1, owed once in the outbox; each carries what one
// composition of all gives for it (resources and their hash), signed for it;
// the nodes enrolled without an overlay address got one first (allocated
// before the snapshot the parts read), so each declaration carries its
// interface. A second declare --changed owes nothing.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshStore, type Store } from '../harness/store.js';
import { declare, declareChanged } from '../../src/assignment/declare.js';
import { partsFor } from '../../src/assignment/compose_parts.js';
import { signingPair } from '../../src/crypto/keys.js';
import { meshId, type Signer } from '../../src/home/home.js';
import { readDeclaration } from '../../src/wire/declaration.js';

const N = 2000;
const P = suite<{ store: Store; signer: Signer }>('declare in parts');

P.before(async (ctx) => {
  ctx.store = await freshStore();
  // declare() opens its own connections, from the store variables, as the CLI does.
  Object.assign(process.env, ctx.store.env);
  const k = signingPair();
  ctx.signer = { secret: k.secret, public: k.public, mesh: meshId(k.public) };
  // Enrolled nodes at 20 sites, one dialable each, none with an overlay address yet.
  await ctx.store.admin`
    insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at)
    select 'q' || lpad(i::text, 5, '0'), 's' || ((i - 1) % 20), case when i <= 20 then 'q' || i || '.test:51820' end, k, k, k, now()
      from generate_series(1, ${N}::int) i, lateral (select decode(md5(i::text) || md5('k' || i), 'hex') as k) x`;
});
P.after(async (ctx) => {
  await ctx.store.drop();
});

P(
  '2,000 nodes composed in parts: one declaration each, what one composition gives, signed and owed once',
  async ({ store, signer }) => {
    assert.ok(partsFor(N) > 1, 'this many nodes are composed in parts');
    const declared = await declare({ signer });
    assert.is(declared.length, N);
    assert.equal([...new Set(declared.map((d) => d.serial))], [1], 'serial 1 for every node');
    assert.is(new Set(declared.map((d) => d.node)).size, N, 'each node once');
    const [o] =
      await store.admin`select count(*)::int as rows, count(distinct node)::int as nodes from assignment.outbox`;
    assert.equal({ ...o }, { rows: N, nodes: N }, 'each owed once');
    // What each carries is what one composition of all gives now (nothing changed since).
    const whole =
      await store.admin`select c.node, c.resources, c.resources_hash, d.resources_hash as recorded, d.envelope
                                     from assignment.compose_each(null) c join assignment.declaration d on d.node = c.node and d.serial = 1`;
    assert.is(whole.length, N);
    assert.equal(
      whole.filter((r) => !r.resources_hash.equals(r.recorded)).map((r) => r.node),
      [],
      "every recorded hash is the composition's",
    );
    for (const r of whole) {
      const decl = readDeclaration(r.envelope, signer.public, { mesh: signer.mesh, node: r.node });
      assert.equal(decl.resources, JSON.parse(r.resources), `${r.node} carries its composition`);
    }
    // Allocated before the snapshot: every node's declaration carries its interface.
    assert.equal(
      whole
        .filter((r) => !JSON.parse(r.resources).some((x: { kind: string }) => x.kind === 'wireguard'))
        .map((r) => r.node),
      [],
    );
    assert.equal(await declareChanged({ signer }), [], 'nothing changed: nothing owed');
  },
);

P(
  'a record that fails mid-declare is the error said, and nothing is owed (the chunks in flight are awaited before the commit)',
  async ({ store, signer }) => {
    // A fault injected into one node's record in each part: whichever part is issued second, its statements only
    // hear "transaction aborted"; the declare must say the fault itself and leave nothing recorded.
    await store.admin.unsafe(`create function public.inject_record_fault() returns trigger language plpgsql as $$
    begin if new.node in ('q00500', 'q01500') then raise exception 'injected record fault'; end if; return new; end $$`);
    await store.admin.unsafe(
      `create trigger fault before insert on assignment.declaration for each row execute function public.inject_record_fault()`,
    );
    try {
      const before = await store.admin`select count(*)::int as n from assignment.outbox`;
      const err = await declare({ signer }).then(
        () => undefined,
        (e: Error) => e,
      );
      assert.ok(err, 'the declare failed');
      assert.match(
        String(err!.message) + String((err as { cause?: Error }).cause?.message ?? ''),
        /injected record fault/,
      );
      const after = await store.admin`select count(*)::int as n from assignment.outbox`;
      assert.is(after[0]!.n, before[0]!.n, 'nothing owed');
      const [d] = await store.admin`select count(*)::int as n from assignment.declaration where serial > 1`;
      assert.is(d!.n, 0, 'nothing recorded');
    } finally {
      await store.admin.unsafe(`drop trigger fault on assignment.declaration`);
      await store.admin.unsafe(`drop function public.inject_record_fault()`);
    }
  },
);

P.run();
