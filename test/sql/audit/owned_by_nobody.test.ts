// C3: the history is owned by nobody who writes it. Each attack is made as
// the roles the daemons and commands hold (serve's and the CLI's context
// roles, the audit reader the console and mesh log use): turning off the
// append-only trigger, granting itself UPDATE, dropping or disabling an audit
// trigger on its own tables. Each is refused. What only a superuser can still
// do (take a trigger away, rewrite the chain whole) is found by verify: the
// triggers it checks, and the head kept outside the store.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import postgres from 'postgres';
import { CONTEXTS } from '../../../src/store/contexts.js';
import { openRoles, closeRoles, refusedWith, enrol, Rollback, tampered, type SqlCtx } from '../helpers.js';

const N = suite<SqlCtx>('the history owned by nobody who writes it');
N.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'web1');
});
N.after(async (ctx) => {
  await closeRoles(ctx);
});

/** STATEMENTS in one transaction, rolled back whatever happens: a refusal is its error; an accepted change does not outlive the test. */
const attempt = (sql: postgres.Sql, ...statements: string[]) =>
  sql.begin(async (tx) => {
    for (const s of statements) await tx.unsafe(s);
    throw new Rollback(`${statements.join('; ')} was accepted`);
  });

const head = async (sql: postgres.Sql | postgres.TransactionSql) =>
  (await sql`select head_seq::int as seq, head from audit.check_history()`)[0] as { seq: number; head: string };

N('C3: the owner of the history may not log in; the audit URL logs in as a reader, which owns nothing', async (ctx) => {
  const owner = postgres(ctx.store.url('inventory').replace('mesh_inventory@', 'mesh_audit@'), {
    max: 1,
    onnotice: () => {},
  });
  try {
    await refusedWith(owner`select 1`, '28000');
  } finally {
    await owner.end();
  }
  const [r] = await ctx.as.audit`select session_user::text as who,
      (select tableowner from pg_tables where schemaname = 'audit' and tablename = 'event') as owner,
      (select rolcanlogin from pg_roles where rolname = 'mesh_audit') as owner_logs_in`;
  assert.equal(r, { who: 'mesh_audit_reader', owner: 'mesh_audit', owner_logs_in: false });
});

N(
  'C3: no role a process holds can turn off the append-only trigger or grant itself UPDATE on the history',
  async (ctx) => {
    for (const c of CONTEXTS) {
      const sql = ctx.as[c];
      const self = (await sql`select session_user::text as u`)[0]!.u as string;
      for (const trigger of ['event_append_only', 'event_no_truncate', 'event_chain']) {
        await refusedWith(attempt(sql, `alter table audit.event disable trigger ${trigger}`), '42501');
      }
      await refusedWith(attempt(sql, 'alter table audit.event disable trigger all'), '42501');
      // A grant it may not make is refused, or (the reader, which holds SELECT) a warning that grants nothing: the update fails.
      await refusedWith(
        attempt(
          sql,
          `grant update, delete, truncate on audit.event to ${self}`,
          "update audit.event set node = 'evil' where seq = 1",
        ),
        '42501',
      );
      await refusedWith(attempt(sql, `alter table audit.event owner to ${self}`), '42501');
      await refusedWith(attempt(sql, "update audit.event set node = 'evil' where seq = 1"), '42501');
    }
    assert.is((await ctx.store.admin`select count(*)::int as n from audit.event where node = 'evil'`)[0]!.n, 0);
  },
);

N(
  "C3: a context's owner cannot drop, disable or rename away an audit trigger on its own tables (MSH74)",
  async (ctx) => {
    const attacks: [keyof SqlCtx['as'], string[]][] = [
      ['inventory', ['drop trigger audit_token_issued on inventory.token']],
      ['inventory', ['alter table inventory.token disable trigger audit_token_spent']],
      ['inventory', ['alter table inventory.node disable trigger user']],
      ['inventory', ['alter table inventory.node enable replica trigger audit_node_retired']],
      ['inventory', ['alter trigger audit_refusal on inventory.refusal rename to quiet']],
      // Renamed away and made again: the new table has no audit trigger.
      [
        'inventory',
        [
          'alter table inventory.broker rename to broker_old',
          'create table inventory.broker (like inventory.broker_old)',
        ],
      ],
      ['assignment', ['drop trigger audit_declaration on assignment.declaration']],
      ['assignment', ['alter table assignment.rollout disable trigger audit_rollout_moved']],
      ['secret', ['drop trigger audit_secret_created on secret.secret']],
      ['secret', ['alter table secret.secret disable trigger user']],
    ];
    for (const [role, statements] of attacks) {
      const e = await refusedWith(attempt(ctx.as[role], ...statements), 'MSH74');
      assert.match(e.message, /^the audit trigger audit_\w+ on \w+\.\w+ would be (gone|disabled): refused/);
    }
    // An owner's ordinary changes to its tables still go through.
    const ordinary = await attempt(ctx.as.inventory, 'alter table inventory.token add column note text').catch(
      (e: unknown) => e,
    );
    assert.instance(ordinary, Rollback, `an ordinary change was refused: ${(ordinary as Error).message}`);
    assert.is(
      (await ctx.store.admin`select count(*)::int as n from audit.trigger_problems()`)[0]!.n,
      0,
      'every audit trigger still in force',
    );
  },
);

N('C3: verify names an audit trigger a superuser took away or turned off (MSH75)', async (ctx) => {
  for (const change of [
    'drop trigger audit_token_issued on inventory.token',
    'alter table inventory.token disable trigger audit_token_issued',
  ]) {
    const e = await tampered(ctx, async (sql) => {
      await sql.unsafe(change);
      return refusedWith(sql`select * from audit.check_history()`, 'MSH75');
    });
    assert.match(
      e.message,
      /^the audit trigger audit_token_issued on inventory.token is not in force: it is (missing|disabled)$/,
    );
  }
  // What the reader (mesh audit verify) sees is the same rule.
  const [whole] = await ctx.as.audit`select rows::int from audit.check_history()`;
  assert.ok(whole!.rows > 0);
});

N('C3: every audit trigger is listed, on every table whose changes the history records', async (ctx) => {
  const listed = (await ctx.as.audit`select on_table || ' ' || trigger as t from audit.watched order by 1`).map(
    (r) => r.t as string,
  );
  for (const t of [
    'audit.event event_append_only',
    'audit.event event_chain',
    'audit.event event_no_truncate',
    'inventory.token audit_token_issued',
    'inventory.node audit_node_retired',
    'assignment.declaration audit_declaration',
    'secret.secret audit_secret_created',
  ])
    assert.ok(listed.includes(t), `${t} is watched`);
});

N(
  'C3: a chain rewritten whole is whole to the recomputation, and found by the head kept outside the store (MSH76)',
  async (ctx) => {
    const kept = await head(ctx.as.audit);
    // Agreed with the head it was taken from.
    const [same] = await ctx.as
      .audit`select rows::int from audit.check_history(kept_seq => ${kept.seq}::bigint, kept_hash => ${kept.head}::text)`;
    assert.is(same!.rows, kept.seq);
    const rewritten = await tampered(ctx, async (sql) => {
      await sql`update audit.event set node = 'elsewhere' where seq = 2`;
      await sql`do $$ declare e audit.event; prev bytea;
        begin
          select hash into prev from audit.event where seq = 1;
          for e in select * from audit.event where seq >= 2 order by seq loop
            update audit.event set prev_hash = prev, hash = audit.link(prev, e) where seq = e.seq returning hash into prev;
          end loop;
        end $$`;
      return {
        alone: await head(sql),
        kept: await refusedWith(
          sql`select * from audit.check_history(kept_seq => ${kept.seq}::bigint, kept_hash => ${kept.head}::text)`,
          'MSH76',
        ),
      };
    });
    assert.is(rewritten.alone.seq, kept.seq, 'the rewritten chain is whole and as long');
    assert.is.not(rewritten.alone.head, kept.head);
    assert.match(
      rewritten.kept.message,
      new RegExp(
        `^the audit history no longer reaches the kept head: row ${kept.seq} has hash [0-9a-f]{64}, the kept head says ${kept.head} \\(the chain was rewritten\\)$`,
      ),
    );
    const cut = await tampered(ctx, async (sql) => {
      await sql`delete from audit.event where seq = ${kept.seq}`;
      return {
        alone: await head(sql),
        kept: await refusedWith(
          sql`select * from audit.check_history(kept_seq => ${kept.seq}::bigint, kept_hash => ${kept.head}::text)`,
          'MSH76',
        ),
      };
    });
    assert.is(cut.alone.seq, kept.seq - 1, 'cut from its end, the chain is whole');
    assert.match(cut.kept.message, new RegExp(`row ${kept.seq} is gone`));
  },
);

N('C3: who is the database role of the session, whatever name the client gives itself', async (ctx) => {
  const liar = postgres(ctx.store.url('inventory'), {
    max: 1,
    onnotice: () => {},
    connection: { application_name: 'mesh token issue (root)' },
  });
  try {
    await enrol({ ...ctx.as, inventory: liar }, 'web2');
  } finally {
    await liar.end();
  }
  const rows = await ctx.as.audit`select actor, role from audit.event where node = 'web2'`;
  assert.ok(rows.length >= 3);
  for (const r of rows)
    assert.equal({ actor: r.actor, role: r.role }, { actor: 'mesh_inventory', role: 'mesh_inventory' });
});

N.run();
