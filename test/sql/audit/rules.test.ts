// audit's rules (C3): the history is append-only in the database itself, for
// its own role too; every row is chained to the one before, and a row edited
// behind the database's back is named by audit.verify(); the facts the other
// contexts record reach it through triggers those contexts know nothing of.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openRoles, closeRoles, refusedWith, enrol, key, Rollback, tampered, type SqlCtx } from '../helpers.js';

const A = suite<SqlCtx>('audit rules, as the roles that reach the history');
A.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
});
A.after(async (ctx) => {
  await closeRoles(ctx);
});

interface Row {
  seq: number;
  kind: string;
  node: string | null;
  detail: Record<string, unknown>;
  actor: string;
  role: string;
}
const rows = async (ctx: SqlCtx): Promise<Row[]> =>
  (await ctx.as
    .audit`select seq::int, kind, node, detail, actor, role from audit.event order by seq`) as unknown as Row[];
const kinds = async (ctx: SqlCtx, after = 0) =>
  (await rows(ctx)).filter((r) => r.seq > after).map((r) => `${r.kind} ${r.node ?? '-'}`);
const last = async (ctx: SqlCtx) =>
  Number((await ctx.as.audit`select coalesce(max(seq), 0) as seq from audit.event`)[0]!.seq);
const verify = async (ctx: SqlCtx, sql: postgres.Sql | postgres.TransactionSql = ctx.as.audit) =>
  (await sql`select seq::int, problem from audit.verify()`)[0] as { seq: number; problem: string } | undefined;

A('the facts of inventory, assignment and secret each land as a row of their kind, with who', async (ctx) => {
  const n = await enrol(ctx.as, 'web1');
  assert.equal(await kinds(ctx), ['token-issued web1', 'token-spent web1', 'enrolled web1']);
  const [issued, spent, enrolled] = await rows(ctx);
  assert.is(issued!.role, 'mesh_inventory', 'the session that made the change');
  assert.is(
    issued!.actor,
    'mesh_inventory',
    'who is the database role, never the name the client gave itself (postgres.js)',
  );
  assert.is(spent!.detail.identity_key, n.identity.toString('hex'));
  assert.is(enrolled!.detail.overlay_key, n.overlay.toString('hex'));
  assert.is(enrolled!.detail.sealing_key, n.sealing.toString('hex'));

  const mark = await last(ctx);
  await ctx.as.assignment`select assignment.record_declarations(${['web1', 'web1']}::text[], ${[1, 2]}::bigint[],
    ${['ab'.repeat(32), 'cd'.repeat(32)]}::text[], ${['00'.repeat(32), '00'.repeat(32)]}::text[], ${'{"serial":1}\n{"serial":2}'}::text)`;
  const hex = n.sealing.toString('hex');
  await ctx.as
    .secret`select secret.put_made(secret_name => 'db-password', holders => ${['web1']}::text[], sealed_to => ${[hex]}::text[], blobs => ${['AAAA']}::text[])`;
  await ctx.as
    .secret`select secret.put_made(secret_name => 'db-password', holders => ${['web1']}::text[], sealed_to => ${[hex]}::text[], blobs => ${['BBBB']}::text[])`;
  assert.is(
    (
      await ctx.as
        .inventory`select inventory.record_refusal(node_name => 'web1', refused_serial => 9, refusal_fault => 'forged', refusal_reason => 'declaration is not signed by the key') as r`
    )[0]!.r,
    1,
  );
  assert.is(
    (
      await ctx.as
        .inventory`select inventory.record_refusal(node_name => 'web1', refused_serial => null, refusal_fault => 'malformed', refusal_reason => 'declaration is not JSON') as r`
    )[0]!.r,
    1,
  );
  await ctx.as.inventory`select inventory.retire_node(node_name => 'web1')`;
  assert.equal(await kinds(ctx, mark), [
    'declared web1',
    'declared web1',
    'secret-created -',
    'rotated -',
    'refused-forged web1',
    'refused-malformed web1',
    'retired web1',
  ]);
  const r = (await rows(ctx)).filter((x) => x.seq > mark);
  assert.equal(r[1]!.detail, { serial: 2, digest: 'cd'.repeat(32) });
  assert.equal(r[3]!.detail, { secret: 'db-password', origin: 'made', generation: 2 });
  assert.equal(
    r[4]!.detail,
    { serial: 9, fault: 'forged', reason: 'declaration is not signed by the key' },
    'each refusal is kept, though inventory keeps the last',
  );
  assert.equal(r[5]!.detail, { serial: null, fault: 'malformed', reason: 'declaration is not JSON' });
  assert.equal(
    r.map((x) => x.role),
    [
      'mesh_assignment',
      'mesh_assignment',
      'mesh_secret',
      'mesh_secret',
      'mesh_inventory',
      'mesh_inventory',
      'mesh_inventory',
    ],
  );
  assert.is(await verify(ctx), undefined, 'the chain is whole');
});

A(
  'each refusal is a row of its own kind when first said; the same kind said again within the window is counted in inventory.refusal, not written again (P2)',
  async (ctx) => {
    await enrol(ctx.as, 'rep1');
    const mark = await last(ctx);
    const refuse = async (serial: number, fault: string, reason: string) =>
      (
        await ctx.as
          .inventory`select inventory.record_refusal(node_name => 'rep1', refused_serial => ${serial}::bigint, refusal_fault => ${fault}::text, refusal_reason => ${reason}::text) as n`
      )[0]!.n as number;
    const again = 'serial 5 is not newer than 9, the one applied';
    assert.equal(
      [await refuse(5, 'replayed', again), await refuse(5, 'replayed', again), await refuse(5, 'replayed', again)],
      [1, 2, 3],
      'counted in a row',
    );
    assert.is(
      await refuse(99, 'forged', 'declaration is not signed by the key'),
      1,
      'another kind is counted on its own',
    );
    assert.is(await refuse(6, 'replayed', 'another reason'), 4, 'the same kind within the window, whatever its reason');
    // An agent from before replayed was a kind: its replays said as forged, the reason saying replayed.
    assert.is(await refuse(5, 'forged', `replayed: ${again}`), 5, 'the same replay, from an older agent');
    assert.equal(await kinds(ctx, mark), ['refused-replayed rep1', 'refused-forged rep1']);
    const r = (await rows(ctx)).filter((x) => x.seq > mark);
    assert.equal(r[0]!.detail, { serial: 5, fault: 'replayed', reason: again });
    const [kept] = await ctx.as
      .inventory`select fault, times, first_at < refused_at as spread from inventory.refusal where node = 'rep1'`;
    assert.equal(kept, { fault: 'replayed', times: 5, spread: true });
    await refusedWith(
      ctx.as
        .inventory`select inventory.record_refusal(node_name => 'rep1', refused_serial => 5, refusal_fault => 'suspicious', refusal_reason => 'x')`,
      '23514',
    );
    assert.equal(await kinds(ctx, mark + 2), [], 'a kind that is not one of the four is refused, not filed');
  },
);

A('a change rolled back leaves no row; a refused token issue none either', async (ctx) => {
  const mark = await last(ctx);
  await ctx.as.inventory
    .begin(async (sql) => {
      await sql`select inventory.issue_token(node_name => 'ghost', token_hash => ${randomBytes(32)}::bytea, node_site => null, node_dialable => null, ttl => '1 hour'::interval)`;
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  await refusedWith(
    ctx.as
      .inventory`select inventory.issue_token(node_name => 'ghost', token_hash => ${randomBytes(32)}::bytea, node_site => null, node_dialable => null, ttl => '0 seconds'::interval)`,
    'MSH03',
  );
  assert.is(await last(ctx), mark);
});

/** STATEMENT in a transaction that is rolled back whatever happens: a refusal is its error; a change that was not refused does not outlive the test. */
const attempt = (sql: postgres.Sql, statement: string, first?: string) =>
  sql.begin(async (tx) => {
    if (first) await tx.unsafe(first);
    await tx.unsafe(statement);
    throw new Rollback(`${statement} was accepted`);
  });

A(
  'C3: UPDATE, DELETE and TRUNCATE are refused to every role: the reader lacks the privilege, and the trigger refuses them (MSH70) to the owner that granted itself back and to a superuser',
  async (ctx) => {
    const changes = [
      "update audit.event set node = 'evil' where seq = 1",
      'delete from audit.event where seq = 1',
      'truncate audit.event',
    ];
    for (const change of changes) await refusedWith(attempt(ctx.as.audit, change), '42501');
    // The owner itself holds none of them, until it grants them back to itself.
    const [held] = await ctx.store.admin`select has_table_privilege('mesh_audit', 'audit.event', 'UPDATE') as u,
                                                has_table_privilege('mesh_audit', 'audit.event', 'DELETE') as d,
                                                has_table_privilege('mesh_audit', 'audit.event', 'TRUNCATE') as t`;
    assert.equal(
      { ...held },
      { u: false, d: false, t: false },
      'the owner of audit.event keeps no UPDATE, DELETE or TRUNCATE',
    );
    // The owner (no process logs in as it: a superuser acting as it) may grant itself the privilege back: the trigger still refuses.
    for (const change of changes) {
      const e = await refusedWith(
        attempt(
          ctx.store.admin,
          change,
          'set local role mesh_audit; grant update, delete, truncate on audit.event to mesh_audit',
        ),
        'MSH70',
      );
      assert.match(e.message, /the audit history is append-only: (UPDATE|DELETE|TRUNCATE) on audit.event refused/);
    }
    // So does a superuser, in ordinary use.
    for (const change of changes) await refusedWith(attempt(ctx.store.admin, change), 'MSH70');
    assert.ok((await last(ctx)) > 0);
    assert.is((await ctx.as.audit`select count(*)::int as n from audit.event where node = 'evil'`)[0]!.n, 0);
  },
);

A(
  'C3: a table whose row removals the history records cannot be truncated by its owner (MSH79), nor its guard dropped',
  async (ctx) => {
    await enrol(ctx.as, 'trunc1');
    const before = await last(ctx);
    for (const [role, table] of [
      ['inventory', 'inventory.node'],
      ['inventory', 'inventory.broker'],
      ['assignment', 'assignment.freeze'],
    ] as const) {
      const e = await refusedWith(ctx.as[role].unsafe(`truncate ${table} cascade`), 'MSH79');
      assert.match(e.message, new RegExp(`TRUNCATE on ${table.replace('.', '\\.')} refused`));
      await refusedWith(ctx.as[role].unsafe(`drop trigger audit_no_truncate on ${table}`), 'MSH74');
    }
    assert.is((await ctx.as.inventory`select count(*)::int as n from inventory.node where name = 'trunc1'`)[0]!.n, 1);
    assert.is(await last(ctx), before, 'nothing removed, nothing recorded');
  },
);

A('C3: no other context can write, change or read the history, and the reader can only read', async (ctx) => {
  for (const role of ['inventory', 'assignment', 'secret', 'audit'] as const) {
    if (role === 'audit') {
      await refusedWith(
        ctx.as[role]`insert into audit.event (kind, node, detail) values ('enrolled', 'evil', '{}')`,
        '42501',
      );
      await refusedWith(ctx.as[role]`select audit.append('enrolled', 'evil', '{}')`, '42501');
      continue;
    }
    await refusedWith(
      ctx.as[role]`insert into audit.event (kind, node, detail) values ('enrolled', 'evil', '{}')`,
      '42501',
    );
    await refusedWith(ctx.as[role]`select audit.append('enrolled', 'evil', '{}')`, '42501');
    await refusedWith(ctx.as[role]`select count(*) from audit.event`, '42501');
  }
});

A('C3: whoever inserts, the database sets seq, time, who and both hashes: a forged hash is not kept', async (ctx) => {
  const mark = await last(ctx);
  const [prev] = await ctx.as.audit`select hash from audit.event where seq = ${mark}`;
  // Only a superuser may insert at all now; the one that does still cannot choose what the chain records.
  const su = postgres(ctx.store.url('inventory').replace('mesh_inventory@', 'postgres@'), {
    max: 1,
    onnotice: () => {},
    connection: { application_name: 'mesh token issue (alice)' },
  });
  try {
    await su`insert into audit.event (seq, at, kind, node, detail, actor, role, prev_hash, hash)
      values (1, now() - interval '1 year', 'enrolled', 'planted', '{}', 'nobody', 'nobody', ${Buffer.alloc(32)}, ${Buffer.alloc(32)})`;
  } finally {
    await su.end();
  }
  const [row] = await ctx.as
    .audit`select seq::int, at > now() - interval '1 minute' as fresh, actor, role, prev_hash, hash from audit.event where node = 'planted'`;
  assert.is(row!.seq, mark + 1);
  assert.ok(row!.fresh);
  // Who is the database role of the session that inserted, never the columns it wrote nor the name it gave itself.
  assert.is(row!.role, 'postgres');
  assert.is(row!.actor, 'postgres');
  assert.equal(row!.prev_hash, prev!.hash);
  assert.is.not(Buffer.compare(row!.hash, Buffer.alloc(32)), 0);
  assert.is(await verify(ctx), undefined);
});

A('C3: each row hashes the one before: sha256(prev_hash || row_text), from 32 zero bytes', async (ctx) => {
  const all = await ctx.as
    .audit`select seq::int, prev_hash, hash, audit.row_text(e) as text from audit.event e order by seq`;
  let prev: Buffer = Buffer.alloc(32);
  for (const r of all) {
    assert.equal(r.prev_hash, prev, `row ${r.seq} carries the hash of the row before`);
    const h = createHash('sha256')
      .update(Buffer.concat([prev, Buffer.from(r.text as string, 'utf8')]))
      .digest();
    assert.equal(r.hash, h, `row ${r.seq}'s hash is recomputed outside the database`);
    prev = r.hash as Buffer;
  }
  assert.ok(all.length > 5);
});

A(
  'C3: a row edited by a superuser behind the triggers is named by verify; so is one removed, the first too',
  async (ctx) => {
    assert.is(await verify(ctx), undefined, 'untouched, the chain is whole');
    const edited = await tampered(ctx, async (sql) => {
      await sql`update audit.event set detail = jsonb_set(detail, '{serial}', '1') where kind = 'declared' and detail->>'serial' = '2'`;
      return verify(ctx, sql);
    });
    const [decl2] = await ctx.as
      .audit`select seq::int from audit.event where kind = 'declared' and detail->>'serial' = '2'`;
    assert.equal(edited, {
      seq: decl2!.seq,
      problem: 'its hash does not match its contents: the row was changed after it was written',
    });
    // A forger who also recomputes the edited row's hash breaks the next row's link.
    const rehashed = await tampered(ctx, async (sql) => {
      await sql`update audit.event e set node = 'other', hash = audit.link(e.prev_hash, (e.seq, e.at, e.kind, 'other', e.detail, e.actor, e.role, e.prev_hash, e.hash)::audit.event) where seq = 2`;
      return verify(ctx, sql);
    });
    assert.equal(rehashed, { seq: 3, problem: "it does not follow row 2 (its prev_hash is not that row's hash)" });
    const removed = await tampered(ctx, async (sql) => {
      await sql`delete from audit.event where seq = 4`;
      return verify(ctx, sql);
    });
    assert.equal(removed, { seq: 5, problem: 'rows 4 to 4 are missing' });
    const first = await tampered(ctx, async (sql) => {
      await sql`delete from audit.event where seq = 1`;
      return verify(ctx, sql);
    });
    assert.equal(first, { seq: 2, problem: 'rows 1 to 1 are missing' });
    assert.is(await verify(ctx), undefined, 'all of it rolled back');
  },
);

A(
  "C3: a row's hash covers who made it: its actor or role rewritten behind the triggers is named by verify",
  async (ctx) => {
    const [target] = await ctx.as
      .audit`select seq::int from audit.event where kind = 'token-spent' order by seq limit 1`;
    for (const edit of ["actor = 'mesh token issue (alice)'", "role = 'mesh_assignment'"]) {
      const found = await tampered(ctx, async (sql) => {
        await sql.unsafe(`update audit.event set ${edit} where seq = ${target!.seq}`);
        return {
          verify: await verify(ctx, sql),
          // What `mesh audit verify` runs: refused, naming the row.
          refused: (await refusedWith(sql`select * from audit.check_history()`, 'MSH71')).message,
        };
      });
      assert.equal(
        found.verify,
        { seq: target!.seq, problem: 'its hash does not match its contents: the row was changed after it was written' },
        edit,
      );
      assert.match(
        found.refused,
        new RegExp(`^the audit history does not match from row ${target!.seq} \\(token-spent,`),
      );
    }
    assert.is(await verify(ctx), undefined, 'all of it rolled back');
  },
);

A(
  'C3: check_history answers the length and newest hash when whole, and refuses with MSH71 naming the first row that does not match',
  async (ctx) => {
    const [ok] = await ctx.as.audit`select rows::int, head from audit.check_history()`;
    assert.is(ok!.rows, await last(ctx));
    const [newest] = await ctx.as.audit`select encode(hash, 'hex') as h from audit.event order by seq desc limit 1`;
    assert.is(ok!.head, newest!.h);
    const e = await tampered(ctx, async (sql) => {
      await sql`update audit.event set node = 'evil' where seq = 2`;
      return refusedWith(sql`select * from audit.check_history()`, 'MSH71');
    });
    assert.match(
      e.message,
      /^the audit history does not match from row 2 \(token-spent, node evil, at .*\): its hash does not match its contents/,
    );
  },
);

A(
  'C3: concurrent appends never fork the chain: every enrolment of many at once is one row after another',
  async (ctx) => {
    const mark = await last(ctx);
    const conns = Array.from({ length: 8 }, () => postgres(ctx.store.url('inventory'), { max: 1, onnotice: () => {} }));
    try {
      await Promise.all(conns.map((c) => c`select 1`));
      await Promise.all(
        conns.map(async (c, i) => {
          const secret = randomBytes(24);
          const hash = createHash('sha256').update(secret).digest();
          await c`select inventory.issue_token(node_name => ${`race${i}`}::text, token_hash => ${hash}::bytea, node_site => null, node_dialable => null, ttl => '1 hour'::interval)`;
          await c`select inventory.spend_token(token_hash => ${hash}::bytea, node_name => ${`race${i}`}::text, identity_key => ${key()}::bytea, overlay_key => ${key()}::bytea, sealing_key => ${key()}::bytea)`;
        }),
      );
    } finally {
      await Promise.all(conns.map((c) => c.end()));
    }
    assert.is(await last(ctx), mark + 24, 'three rows a node, none lost');
    const seqs = (await rows(ctx)).map((r) => r.seq);
    assert.equal(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i + 1),
      'no gap, no repeat',
    );
    assert.is(await verify(ctx), undefined);
  },
);

A(
  'C3: an append waits its turn on the chain: one made while another transaction holds the turn follows it, never beside it',
  async (ctx) => {
    const issue = (
      sql: postgres.Sql | postgres.TransactionSql,
      name: string,
    ) => sql`select inventory.issue_token(node_name => ${name}::text,
    token_hash => ${randomBytes(32)}::bytea, node_site => null, node_dialable => null, ttl => '1 hour'::interval)`;
    const other = postgres(ctx.store.url('inventory'), {
      max: 1,
      onnotice: () => {},
      connection: { application_name: 'second' },
    });
    try {
      await other`select 1`;
      let second: Promise<unknown> | undefined;
      await ctx.as.inventory.begin(async (sql) => {
        await issue(sql, 'first');
        // The deferred append runs now instead of at commit: this transaction holds the chain's turn.
        await sql`set constraints all immediate`;
        second = issue(other, 'second').catch((e: unknown) => e);
        assert.ok(
          await until(
            async () =>
              (
                await ctx.store
                  .admin`select 1 from pg_stat_activity where application_name = 'second' and wait_event_type = 'Lock'`
              ).length > 0,
          ),
          'the second append waits while the first holds the turn',
        );
      });
      const e = await second;
      assert.not.instance(e, Error, `the second append failed: ${(e as Error)?.message}`);
    } finally {
      await other.end();
    }
    const [a, b] = (await rows(ctx)).slice(-2);
    assert.equal([a!.kind, a!.node, b!.kind, b!.node], ['token-issued', 'first', 'token-issued', 'second']);
    assert.is(await verify(ctx), undefined);
  },
);

/** Whether F came true within a few seconds (a wait, not a timed assertion: it is true at once unless something is wrong). */
async function until(f: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    if (await f()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

A.run();
