// catalogue's rules as mesh_catalogue: a build needs a source (MSH30), a
// module carries no resource the mesh composes itself (MSH31), a request is
// answered once (B1), the newest sighting of a source's head wins
// whatever order sightings arrive in (B2), and a build naming an image
// repository other than its module's is refused and recorded as failed (B3).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { openRoles, closeRoles, refusedWith, type SqlCtx } from '../helpers.js';

const C = suite<SqlCtx>('catalogue rules, as mesh_catalogue');
C.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
});
C.after(async (ctx) => {
  await closeRoles(ctx);
});

const source = (ctx: SqlCtx, m: string, image: string | null = null) => ctx.as
  .catalogue`select catalogue.set_source(module_name => ${m}::text, source_url => 'https://git.example/x.git'::text,
  source_path => '.'::text, source_ref => 'main'::text, source_image => ${image}::text) as image`;
const sight = (ctx: SqlCtx, m: string, commit: string, at: string) => ctx.as
  .catalogue`select catalogue.record_source_head(module_name => ${m}::text,
  commit_sha => ${commit}::text, seen_at => ${at}::timestamptz)`;
const head = async (ctx: SqlCtx, m: string) =>
  (await ctx.as.catalogue`select source_head from catalogue.module_status where module = ${m}`)[0]!
    .source_head as string;

const OLD = 'a'.repeat(40),
  NEW = 'b'.repeat(40);

C('a build of a module without a source is refused (MSH30), and nothing is recorded', async (ctx) => {
  await refusedWith(
    ctx.as
      .catalogue`select * from catalogue.request_build(request_id => ${randomUUID()}::uuid, module_name => 'nowhere'::text, build_ref => null::text)`,
    'MSH30',
  );
  assert.is((await ctx.as.catalogue`select count(*)::int as n from catalogue.build_request`)[0]!.n, 0);
});

C(
  'a module carrying a firewall, wireguard or secret resource is refused (MSH31), and the module is not stored',
  async (ctx) => {
    const put = (name: string, resources: unknown[]) => ctx.as
      .catalogue`select * from catalogue.put_module(module_name => ${name}::text,
    module_resources => ${ctx.as.catalogue.json(resources as never)}::jsonb, module_origin => 'handed')`;
    const file = { id: 'file:/etc/x', kind: 'file', path: '/etc/x', content: 'eA==', mode: '0644' };
    const e = await refusedWith(
      put('sneaky', [file, { id: 'firewall:mesh', kind: 'firewall', name: 'mesh', rules: [] }]),
      'MSH31',
    );
    assert.match(e.message, /firewall/);
    await refusedWith(
      put('tunnel', [{ id: 'wireguard:wg9', kind: 'wireguard', name: 'wg9', address: '10.9.0.1/24', peers: [] }]),
      'MSH31',
    );
    await refusedWith(
      put('sealed', [{ id: 'secret:/etc/k', kind: 'secret', path: '/etc/k', mode: '0600', sealed: 'eA==' }]),
      'MSH31',
    );
    assert.is(
      (
        await ctx.as
          .catalogue`select count(*)::int as n from catalogue.module where name in ('sneaky', 'tunnel', 'sealed')`
      )[0]!.n,
      0,
    );
    // what a module may put is stored, and stored again unchanged keeps its version
    const opening = { id: 'opening:web', kind: 'opening', name: 'web', proto: 'tcp', port: 80, from: 'any' };
    assert.is((await put('fine', [file, opening]))[0]!.version, 1);
    assert.is((await put('fine', [file, opening]))[0]!.version, 1);
    assert.is((await put('fine', [file]))[0]!.version, 2);
  },
);

C('B2: the newest sighting of a source head wins, in either order of arrival', async (ctx) => {
  await source(ctx, 'inorder');
  await sight(ctx, 'inorder', OLD, '2026-01-01T10:00:00Z');
  await sight(ctx, 'inorder', NEW, '2026-01-01T11:00:00Z');
  assert.is(await head(ctx, 'inorder'), NEW);
  await source(ctx, 'late');
  await sight(ctx, 'late', NEW, '2026-01-01T11:00:00Z');
  await sight(ctx, 'late', OLD, '2026-01-01T10:00:00Z'); // a builder's clone-time sighting, landing after a later --refresh
  assert.is(await head(ctx, 'late'), NEW);
});

C('B1: a request is answered once; a second answer is a duplicate and changes nothing', async (ctx) => {
  await source(ctx, 'once', 'reg/once');
  const id = randomUUID();
  await ctx.as
    .catalogue`select * from catalogue.request_build(request_id => ${id}::uuid, module_name => 'once'::text, build_ref => null::text)`;
  const answer = (builder: string, ok: boolean) =>
    ctx.as.catalogue`select catalogue.record_build_result(request_id => ${id}::uuid,
    builder_name => ${builder}::text, build_ok => ${ok}::boolean, commit_sha => ${ok ? OLD : null}::text, source_head => null::text,
    head_seen_at => null::timestamptz, image => ${ok ? 'reg/once' : null}::text, digest => ${ok ? 'sha256:' + '0'.repeat(64) : null}::text,
    error => ${ok ? null : 'it broke'}::text, log_tail => ''::text) as r`.then((r) => r[0]!.r as string);
  assert.is(await answer('b1', true), 'recorded');
  assert.is(await answer('b2', false), 'duplicate');
  const [s] = await ctx.as.catalogue`select state, ok, builder from catalogue.build_status where id = ${id}::uuid`;
  assert.equal({ ...s }, { state: 'built', ok: true, builder: 'b1' });
  assert.is(
    await ctx.as
      .catalogue`select catalogue.record_build_result(request_id => ${randomUUID()}::uuid, builder_name => 'b1', build_ok => false,
    commit_sha => null, source_head => null, head_seen_at => null, image => null, digest => null, error => 'x', log_tail => null) as r`.then(
      (r) => r[0]!.r,
    ),
    'unknown',
  );
});

/** Ask for a build of MODULE and answer it as builder b1, a success naming IMAGE; the outcome. */
async function built(ctx: SqlCtx, module: string, image: string, id = randomUUID()): Promise<string> {
  await ctx.as
    .catalogue`select * from catalogue.request_build(request_id => ${id}::uuid, module_name => ${module}::text, build_ref => null::text)`;
  const [r] = await ctx.as.catalogue`select catalogue.record_build_result(request_id => ${id}::uuid,
    builder_name => 'b1'::text, build_ok => true, commit_sha => ${OLD}::text, source_head => null::text,
    head_seen_at => null::timestamptz, image => ${image}::text, digest => ${'sha256:' + '1'.repeat(64)}::text,
    error => null::text, log_tail => ''::text) as r`;
  return r!.r as string;
}

C(
  'B3: a source is assigned one image repository: the one given, kept when left out, a default when new',
  async (ctx) => {
    assert.is(
      (await source(ctx, 'assigned', 'registry.example.org:5000/team/web'))[0]!.image,
      'registry.example.org:5000/team/web',
    );
    assert.is((await source(ctx, 'assigned'))[0]!.image, 'registry.example.org:5000/team/web', 'kept');
    assert.is((await source(ctx, 'fresh'))[0]!.image, '127.0.0.1:5000/fresh', 'the builder default');
  },
);

C(
  'B3: a build naming another registry or repository is refused, recorded as failed, and the module keeps its image',
  async (ctx) => {
    await source(ctx, 'pinned', 'reg.example:5000/pinned');
    assert.is(await built(ctx, 'pinned', 'reg.example:5000/pinned'), 'recorded');
    const image = async () =>
      (await ctx.as.catalogue`select resources->0->>'image' as image from catalogue.module where name = 'pinned'`)[0]!
        .image;
    const good = `reg.example:5000/pinned@sha256:${'1'.repeat(64)}`;
    assert.is(await image(), good);
    for (const other of ['evil.example:5000/pinned', 'reg.example:5000/other', 'reg.example:5001/pinned']) {
      const id = randomUUID();
      assert.is(await built(ctx, 'pinned', other, id), 'refused', other);
      const [s] = await ctx.as.catalogue`select state, ok, error from catalogue.build_status where id = ${id}::uuid`;
      assert.is(s!.state, 'failed', other);
      assert.is(s!.ok, false, other);
      assert.is(
        s!.error,
        `refused: the build names image repository ${other}, and module pinned takes images only from reg.example:5000/pinned`,
      );
      assert.is(await image(), good, 'the module keeps the image it had');
    }
  },
);

C.run();
