// What provision declares of a pair's credential, read as assignment reads it
// (provision.node_resources): the credential file is 0600 on both ends (S2),
// and a holder whose copy is sealed to a key it no longer has is declared no
// credential at all, while the other end's copy still is (S3).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, pgAndApp, enrol, assign, type SqlCtx, type Enrolled } from '../helpers.js';

interface Ctx extends SqlCtx {
  db1: Enrolled;
  web1: Enrolled;
}
const C = suite<Ctx>("a pair's credential files, as provision declares them");
const SECRET = 'provision/appdb/app';

C.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  Object.assign(ctx, await pgAndApp(ctx.as));
  await ctx.as
    .provision`select provision.offer(provision_name => 'appdb', provision_kind => 'postgres', provider_module => 'pg',
    provision_facts => ${ctx.as.provision.json({ host: '127.0.0.1', port: 5432 })}::jsonb)`;
  await ctx.as.provision`select provision.grant(provision_name => 'appdb', consumer_module => 'app',
    grant_facts => ${ctx.as.provision.json({ database: 'app', user: 'app_user' })}::jsonb)`;
  // What a rotation stores: one blob a holder, sealed to its key (the value is not SQL's to see).
  await ctx.as.secret`select secret.put_made(secret_name => ${SECRET}::text, holders => ${['db1', 'web1']}::text[],
    sealed_to => ${[ctx.db1.sealing.toString('hex'), ctx.web1.sealing.toString('hex')]}::text[], blobs => ${['AAAAdb1==', 'AAAAweb1==']}::text[])`;
});
C.after(async (ctx) => {
  await closeRoles(ctx);
});

/** The credential files (the ones carrying a sealed blob) declared on NODE. */
const credentials = async (ctx: SqlCtx, node: string) =>
  (
    await ctx.as.assignment`select resource from provision.node_resources where node = ${node} and resource ? 'sealed'`
  ).map((r) => r.resource as Record<string, string>);

C("S2: each end's credential file is declared 0600", async (ctx) => {
  for (const node of ['db1', 'web1']) {
    const files = await credentials(ctx, node);
    assert.ok(files.length >= 1, `${node} is declared its credential`);
    for (const f of files) assert.is(f.mode, '0600', `${node}: ${f.path}`);
  }
});

C(
  'S3: a holder back with a new sealing key is declared no credential until it is made again; the other end still is',
  async (ctx) => {
    await ctx.as.inventory`select inventory.retire_node(node_name => 'web1')`;
    await enrol(ctx.as, 'web1');
    await assign(ctx.as, 'app', 'web1');
    assert.equal(await credentials(ctx, 'web1'), [], 'a copy sealed to the old key is never declared');
    assert.ok((await credentials(ctx, 'db1')).length >= 1, "the provider's own copy is still current");
  },
);

C.run();
