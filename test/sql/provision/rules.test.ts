// provision's rules as mesh_provision: offers and grants (MSH54-MSH59), and
// the first step of a rotation, which resolves every holder of a pair or
// refuses before anything is made (S5: MSH50-MSH53).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, refusedWith, enrol, putModule, assign, type SqlCtx } from '../helpers.js';

const P = suite<SqlCtx>('provision rules, as mesh_provision');
P.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  for (const m of ['pg', 'app', 'app2', 'proxy', 'site']) await putModule(ctx.as, m);
  for (const n of ['db1', 'web1']) await enrol(ctx.as, n);
  await assign(ctx.as, 'pg', 'db1');
  await assign(ctx.as, 'app', 'web1');
  await offer(ctx, 'appdb', 'postgres', 'pg');
  await offer(ctx, 'www', 'route', 'proxy');
});
P.after(async (ctx) => {
  await closeRoles(ctx);
});

const offer = (ctx: SqlCtx, name: string, kind: string, provider: string) => ctx.as
  .provision`select provision.offer(provision_name => ${name}::text,
  provision_kind => ${kind}::text, provider_module => ${provider}::text, provision_facts => '{}'::jsonb)`;
const grant = (ctx: SqlCtx, name: string, consumer: string, facts: Record<string, unknown>) => ctx.as
  .provision`select provision.grant(
  provision_name => ${name}::text, consumer_module => ${consumer}::text, grant_facts => ${ctx.as.provision.json(facts as never)}::jsonb) as secret`;
const resolve = (ctx: SqlCtx, name: string, consumer: string) => ctx.as
  .provision`select node, sides, sealing_key, secret
  from provision.resolve_holders(provision_name => ${name}::text, consumer_module => ${consumer}::text) order by node`;

P('offering a provision again with another kind or provider is refused (MSH54)', async (ctx) => {
  await refusedWith(offer(ctx, 'appdb', 'route', 'pg'), 'MSH54');
  await refusedWith(offer(ctx, 'appdb', 'postgres', 'app'), 'MSH54');
});

P('grants: each refusal has its own code (MSH55-MSH59)', async (ctx) => {
  await refusedWith(grant(ctx, 'nothing', 'app', { database: 'app', user: 'app_user' }), 'MSH56');
  await refusedWith(grant(ctx, 'appdb', 'app', { database: 'App', user: 'app_user' }), 'MSH55');
  await refusedWith(grant(ctx, 'appdb', 'app', { database: 'app' }), 'MSH55');
  assert.is(
    (await grant(ctx, 'appdb', 'app', { database: 'app', user: 'app_user' }))[0]!.secret,
    'provision/appdb/app',
  );
  await refusedWith(grant(ctx, 'appdb', 'app2', { database: 'app2', user: 'app_user' }), 'MSH57');
  await refusedWith(grant(ctx, 'www', 'site', { name: 'Bad_Name', port: 80 }), 'MSH58');
  await refusedWith(grant(ctx, 'www', 'site', { name: 'site.example', port: 70000 }), 'MSH58');
  await refusedWith(grant(ctx, 'www', 'site', { name: 'site.example' }), 'MSH58');
  assert.is(
    (await grant(ctx, 'www', 'site', { name: 'site.example', port: 8080 }))[0]!.secret,
    null,
    'a route carries no credential',
  );
  await refusedWith(grant(ctx, 'www', 'app', { name: 'site.example', port: 8081 }), 'MSH59');
});

P(
  'a rotation of a pair never granted (MSH50), of a route (MSH53), or that no node runs (MSH52) is refused',
  async (ctx) => {
    await refusedWith(resolve(ctx, 'appdb', 'proxy'), 'MSH50');
    await grant(ctx, 'www', 'site', { name: 'site.example', port: 8080 });
    await refusedWith(resolve(ctx, 'www', 'site'), 'MSH53');
    await offer(ctx, 'spare', 'postgres', 'proxy');
    await grant(ctx, 'spare', 'app2', { database: 'spare', user: 'spare_user' });
    await refusedWith(resolve(ctx, 'spare', 'app2'), 'MSH52');
  },
);

P(
  'S5: a holder that is not enrolled any more stops the rotation in SQL, before any value is made (MSH51)',
  async (ctx) => {
    await grant(ctx, 'appdb', 'app', { database: 'app', user: 'app_user' });
    await enrol(ctx.as, 'ghost');
    await assign(ctx.as, 'app', 'ghost');
    assert.equal(
      (await resolve(ctx, 'appdb', 'app')).map((h) => [h.node, h.sides]),
      [
        ['db1', ['provider']],
        ['ghost', ['consumer']],
        ['web1', ['consumer']],
      ],
    );
    await ctx.as.inventory`select inventory.retire_node(node_name => 'ghost')`;
    const e = await refusedWith(resolve(ctx, 'appdb', 'app'), 'MSH51');
    assert.match(e.message, /cannot resolve ghost/);
    assert.match(e.hint ?? '', /nothing was sent and the old credential keeps working/);
    assert.is(
      (await ctx.as.secret`select count(*)::int as n from secret.secret`)[0]!.n,
      0,
      'nothing was made or stored',
    );
  },
);

P.run();
