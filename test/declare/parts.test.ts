// `mesh declare` for a fleet large enough to commit in parts (2,000 nodes:
// partsOf in src/assignment/declare.ts), on a real store: every node gets
// exactly one declaration, serial 1, owed once in the outbox, each part its
// own transaction; each carries what one composition of all gives for it
// (resources and their hash), signed for it; the nodes enrolled without an
// overlay address got one first, so each declaration carries its interface.
// The declare turn is held across every part (no other declare can take it
// between them). A part that fails is said with how many nodes were declared
// before it, and theirs stand; a change a freeze holds is refused before any
// part commits. A second declare --changed owes nothing.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshStore, type Store } from '../harness/store.js';
import { declare, declareChanged } from '../../src/assignment/declare.js';
import { partsOf } from '../../src/assignment/declare.js';
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
    const parts = partsOf([...Array(N).keys()].map(String)).length;
    assert.ok(parts > 2, 'this many nodes are declared in more than two parts');
    const declared = await declare({ signer });
    assert.is(declared.length, N);
    assert.equal([...new Set(declared.map((d) => d.serial))], [1], 'serial 1 for every node');
    assert.is(new Set(declared.map((d) => d.node)).size, N, 'each node once');
    const [o] =
      await store.admin`select count(*)::int as rows, count(distinct node)::int as nodes from assignment.outbox`;
    assert.equal({ ...o }, { rows: N, nodes: N }, 'each owed once');
    // Each part its own transaction: its declarations share the time it began, no other part's.
    const [t] = await store.admin`select count(distinct issued_at)::int as n from assignment.declaration`;
    assert.is(t!.n, parts, 'one transaction a part');
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
    // Allocated before the parts: every node's declaration carries its interface.
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
  'the declare turn is held across every part: no other declare could take it between them',
  async ({ store, signer }) => {
    // Each record statement looks, from inside its part's transaction, for the turn's lock granted (pg_locks).
    await store.admin.unsafe(`create table public.turn_probe (free boolean)`);
    await store.admin
      .unsafe(`create function public.probe_turn() returns trigger language plpgsql security definer as $$
    declare k bigint := assignment.declare_turn_key();
    begin
      insert into public.turn_probe select not exists (select 1 from pg_locks l where l.locktype = 'advisory' and l.granted
        and l.classid::bigint = (k >> 32) & 4294967295 and l.objid::bigint = k & 4294967295 and l.objsubid = 1);
      return null;
    end $$`);
    await store.admin.unsafe(
      `create trigger probe after insert on assignment.declaration for each statement execute function public.probe_turn()`,
    );
    try {
      assert.is((await declare({ signer })).length, N);
      const probes = await store.admin`select free from public.turn_probe`;
      assert.ok(probes.length >= 3, `a probe from every part (${probes.length})`);
      assert.equal(
        probes.filter((p) => p.free),
        [],
        'the turn was held by the declare in every part',
      );
      const [after] = await store.admin`select pg_try_advisory_lock(assignment.declare_turn_key()) as free`;
      assert.ok(after!.free, 'and given back when it ended');
      await store.admin`select pg_advisory_unlock(assignment.declare_turn_key())`;
    } finally {
      await store.admin.unsafe(`drop trigger probe on assignment.declaration`);
      await store.admin.unsafe(`drop function public.probe_turn()`);
      await store.admin.unsafe(`drop table public.turn_probe`);
    }
  },
);

P(
  'a part that fails is the error said with how many nodes were declared before it: theirs stand, the rest hold their previous one',
  async ({ store, signer }) => {
    // A fault injected into one node's record in the second and third parts; the first (q00001 to q00200) commits.
    await store.admin.unsafe(`create function public.inject_record_fault() returns trigger language plpgsql as $$
    begin if new.node in ('q00500', 'q01500') then raise exception 'injected record fault'; end if; return new; end $$`);
    await store.admin.unsafe(
      `create trigger fault before insert on assignment.declaration for each row execute function public.inject_record_fault()`,
    );
    const newest = async () =>
      (await store.admin`select node, serial from assignment.node_serial order by node`).map(
        (r) => [r.node as string, Number(r.serial)] as const,
      );
    const before = await newest();
    const [b] = await store.admin`select max(serial)::int as s from assignment.declaration`;
    try {
      const err = await declare({ signer }).then(
        () => undefined,
        (e: Error) => e,
      );
      assert.ok(err, 'the declare failed');
      const said = String(err!.message) + String((err as { cause?: Error }).cause?.message ?? '');
      assert.match(said, /injected record fault/);
      assert.match(said, /after 200 of 2000 nodes were declared/);
    } finally {
      await store.admin.unsafe(`drop trigger fault on assignment.declaration`);
      await store.admin.unsafe(`drop function public.inject_record_fault()`);
    }
    const declared =
      await store.admin`select node from assignment.declaration where serial > ${b!.s}::int order by node`;
    assert.is(declared.length, 200, 'the first part stands');
    assert.is(declared[0]!.node, 'q00001');
    assert.is(declared.at(-1)!.node, 'q00200');
    const [o] = await store.admin`select count(*)::int as n from assignment.outbox where serial > ${b!.s}::int`;
    assert.is(o!.n, 200, 'and is owed, nothing of the failed parts');
    // The rest hold their previous declaration, which the next declare replaces.
    const after = new Map(await newest());
    assert.equal(
      before.filter(([n, s]) => n > 'q00200' && after.get(n) !== s).map(([n]) => n),
      [],
      'no node past the first part has a new serial',
    );
    assert.is((await declare({ signer })).length, N, 'declared again, every node');
  },
);

P(
  'a change a freeze holds is refused before any part commits (MSHQ8): a held fleet is one transaction',
  async ({ store, signer }) => {
    // Site s3 frozen for an hour; q01504 (site s3, in the third part) given a module: a change the freeze holds.
    const [f] =
      await store.admin`select assignment.add_freeze(now() - interval '1 minute', now() + interval '1 hour', 's3', null) as id`;
    await store.admin`select * from catalogue.put_module(module_name => 'held', module_resources => ${store.admin.json([{ id: 'file:/etc/held', kind: 'file', path: '/etc/held', content: 'aGk=', mode: '0644' }] as never)}::jsonb, module_origin => 'handed')`;
    await store.admin`select assignment.assign(module_name => 'held', node_name => 'q01504')`;
    const [b] = await store.admin`select count(*)::int as n from assignment.declaration`;
    try {
      const err = await declare({ signer, refuseHeld: true }).then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
      assert.is((err as { code?: string } | undefined)?.code, 'MSHQ8', String(err));
      const [a] = await store.admin`select count(*)::int as n from assignment.declaration`;
      assert.is(a!.n, b!.n, 'nothing committed, the first part neither');
    } finally {
      await store.admin`update assignment.freeze set ended_at = now() where id = ${f!.id}`;
      await store.admin`select assignment.unassign(module_name => 'held', node_name => 'q01504')`;
    }
  },
);

P.run();
