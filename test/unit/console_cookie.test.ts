// A request to the console with any cookie must not cost a query before it is
// known to be one the console could have made: only a cookie of the form
// openSession makes reaches the store.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { sessionOf } from '../../src/console/server.js';
import type { Sql } from '../../src/store/connect.js';

const T = suite('the console asks the store only about a well-formed cookie');

T('a cookie of any other form is no session and no query; a well-formed one is asked about', async () => {
  let queries = 0;
  const sql = (() => {
    queries++;
    return Promise.resolve([{ left_ms: null }]);
  }) as unknown as Sql;
  const req = (cookie: string) => ({ headers: { cookie } });
  for (const c of ['mesh_console=x', `mesh_console=${'a'.repeat(4096)}`, "mesh_console=' or 1=1 --", 'other=1']) {
    assert.is(await sessionOf(sql, req(c)), null, c.slice(0, 40));
  }
  assert.is(queries, 0, 'no query for a cookie the console never makes');
  assert.is(await sessionOf(sql, req(`mesh_console=${randomBytes(32).toString('base64url')}`)), null);
  assert.is(queries, 1, 'a well-formed cookie is judged by the store');
});

T.run();
