// secret's rules as mesh_secret: every blob sealed to an enrolled holder's
// current key (MSH41, MSH43-MSH45), made and accepted never change places
// (S4: MSH40, MSH42), and a copy sealed to a key its holder no longer has is
// never declared (S3).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, refusedWith, enrol, key, type SqlCtx, type Enrolled } from '../helpers.js';

interface Ctx extends SqlCtx {
  web1: Enrolled;
  web2: Enrolled;
}
const S = suite<Ctx>('secret rules, as mesh_secret');
S.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  ctx.web1 = await enrol(ctx.as, 'web1');
  ctx.web2 = await enrol(ctx.as, 'web2');
});
S.after(async (ctx) => {
  await closeRoles(ctx);
});

const hex = (b: Buffer) => b.toString('hex');
const BLOB = 'AAAAsealedbytesAAAA==';
const made = (ctx: SqlCtx, name: string, holders: string[], keys: string[], path: string | null = null) => ctx.as
  .secret`select secret.put_made(
  secret_name => ${name}::text, holders => ${holders}::text[], sealed_to => ${keys}::text[], blobs => ${holders.map(() => BLOB)}::text[],
  secret_path => ${path}::text) as generation`;
const accepted = (ctx: SqlCtx, name: string, holders: string[], keys: string[]) => ctx.as
  .secret`select secret.put_accepted(
  secret_name => ${name}::text, holders => ${holders}::text[], sealed_to => ${keys}::text[], blobs => ${holders.map(() => BLOB)}::text[],
  secret_path => '/etc/acc'::text, secret_mode => '0600'::text) as generation`;
const count = async (ctx: SqlCtx) =>
  (
    await ctx.as
      .secret`select (select count(*) from secret.secret)::int as s, (select count(*) from secret.sealed)::int as b`
  )[0]!;

S('a secret with no holder is refused (MSH44); holders and keys must pair up (MSH45)', async (ctx) => {
  await refusedWith(made(ctx, 'none', [], []), 'MSH44');
  await refusedWith(made(ctx, 'odd', ['web1', 'web2'], [hex(ctx.web1.sealing)]), 'MSH45');
  assert.equal({ ...(await count(ctx)) }, { s: 0, b: 0 });
});

S(
  'a holder that is not enrolled (MSH41) or whose key is not the one sealed to (MSH43) stops the whole secret',
  async (ctx) => {
    await refusedWith(made(ctx, 'ghostly', ['web1', 'ghost'], [hex(ctx.web1.sealing), hex(key())]), 'MSH41');
    await refusedWith(made(ctx, 'stale', ['web1', 'web2'], [hex(ctx.web1.sealing), hex(key())]), 'MSH43');
    assert.equal({ ...(await count(ctx)) }, { s: 0, b: 0 }, 'not one blob stored');
  },
);

S(
  'S4: an accepted secret is never made again (MSH40); a made one is never replaced by an accepted value (MSH42)',
  async (ctx) => {
    assert.is((await accepted(ctx, 'told', ['web1'], [hex(ctx.web1.sealing)]))[0]!.generation, 1);
    await refusedWith(made(ctx, 'told', ['web1'], [hex(ctx.web1.sealing)]), 'MSH40');
    assert.is((await made(ctx, 'ours', ['web1'], [hex(ctx.web1.sealing)]))[0]!.generation, 1);
    await refusedWith(accepted(ctx, 'ours', ['web1'], [hex(ctx.web1.sealing)]), 'MSH42');
    const rows = await ctx.as.secret`select name, origin, generation from secret.secret order by name`;
    assert.equal(
      rows.map((r) => [r.name, r.origin, r.generation]),
      [
        ['ours', 'made', 1],
        ['told', 'accepted', 1],
      ],
    );
  },
);

S("S3: a copy sealed to a key its holder no longer has is never declared; the other holder's still is", async (ctx) => {
  await made(ctx, 'cert', ['web1', 'web2'], [hex(ctx.web1.sealing), hex(ctx.web2.sealing)], '/etc/cert');
  const declared = async () =>
    (
      await ctx.as
        .assignment`select node from secret.node_resources where resource->>'id' = 'secret:/etc/cert' order by node`
    ).map((r) => r.node);
  assert.equal(await declared(), ['web1', 'web2']);
  // web1 is rebuilt: retired and enrolled again, with a new sealing key.
  await ctx.as.inventory`select inventory.retire_node(node_name => 'web1')`;
  ctx.web1 = await enrol(ctx.as, 'web1');
  assert.equal(await declared(), ['web2']);
  const composed = (await ctx.as.assignment`select assignment.compose(node_name => 'web1') as r`)[0]!.r as {
    id: string;
  }[];
  assert.not.ok(
    composed.some((r) => r.id === 'secret:/etc/cert'),
    "not in web1's declaration",
  );
  const stale = await ctx.as.secret`select secret, stale_holders from secret.stale where secret = 'cert'`;
  assert.equal(
    stale.map((s) => [s.secret, s.stale_holders]),
    [['cert', ['web1']]],
  );
});

S.run();
