// E2: spend first, record keys second. A spend that does not spend (an
// unknown, spent or expired token) records no key: keys recorded before the
// token is spent would give a name an identity nobody was let in with.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import postgres from 'postgres';
import { openRole, closeRole, type RoleCtx, type Store } from '../harness/store.js';

const S = suite<RoleCtx>('E2 spend first, record keys second');
S.before((ctx) => openRole(ctx, 'inventory'));
S.after(closeRole);

const hash = (s: string) => createHash('sha256').update(s).digest();
const key = (n: number) => Buffer.alloc(32, n);
const spend = (sql: postgres.Sql, secret: string, node: string, k: number) =>
  sql`select inventory.spend_token(token_hash => ${hash(secret)}::bytea, node_name => ${node}::text, identity_key => ${key(k)}::bytea,
        overlay_key => ${key(k + 1)}::bytea, sealing_key => ${key(k + 2)}::bytea) as o`.then((r) => r[0]!.o as string);
const keysOf = async (store: Store, node: string) => {
  const [n] =
    await store.admin`select identity_key, overlay_key, sealing_key, enrolled_at from inventory.node where name = ${node}`;
  return n!;
};

S(
  'a token spent once keeps the keys of the one who spent it; a second spend records nothing',
  async ({ store, sql }) => {
    await sql`select inventory.issue_token('web1', ${hash('first')}::bytea, null, null, interval '1 hour')`;
    assert.is(await spend(sql, 'first', 'web1', 10), 'enrolled');
    assert.is(await spend(sql, 'first', 'web1', 20), 'token already spent');
    const n = await keysOf(store, 'web1');
    assert.equal([n.identity_key, n.overlay_key, n.sealing_key], [key(10), key(11), key(12)]);
  },
);

S('a spend with an unknown token records no key and enrols nobody', async ({ store, sql }) => {
  await sql`select inventory.issue_token('web2', ${hash('real')}::bytea, null, null, interval '1 hour')`;
  assert.is(await spend(sql, 'guessed', 'web2', 30), 'unknown token');
  const n = await keysOf(store, 'web2');
  assert.equal([n.identity_key, n.overlay_key, n.sealing_key, n.enrolled_at], [null, null, null, null]);
  // The real token still works afterwards: nothing was spent.
  assert.is(await spend(sql, 'real', 'web2', 40), 'enrolled');
});

S.run();
