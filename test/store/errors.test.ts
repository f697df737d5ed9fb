// The one register of error codes (src/store/errors.ts) against what sql/
// raises: one code, one meaning, one context; nothing raised that the
// register does not know, nothing in the register that nothing raises. And
// storeError maps a code, never a prefix or a message.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { REGISTER, storeError, MeshError, UnregisteredCode } from '../../src/store/errors.js';
import { sqlRaises } from './sql_codes.js';
import { freshStore, type Store } from '../harness/store.js';

const RANGES: Record<string, RegExp> = {
  inventory: /^MSH[01]\d$/, assignment: /^MSH2\d$/, catalogue: /^MSH3\d$/, secret: /^MSH4\d$/, provision: /^MSH5\d$/, overlay: /^MSH6\d$/, audit: /^MSH7\d$/,
};

const R = suite<{ store: Store }>('the register of error codes');
R.before(async (ctx) => { ctx.store = await freshStore(); });
R.after(async (ctx) => { await ctx.store?.drop(); });
const raises = sqlRaises();

R('the scan finds the raises (a scanner that reads nothing proves nothing)', () => {
  assert.ok(raises.length >= REGISTER.length, `${raises.length} raises found`);
  assert.ok(raises.some((r) => r.where === 'overlay.set_hub' && r.code === 'MSH62'));
});

R('every raise carries one of our codes', () => {
  const bare = raises.filter((r) => !r.code || !/^MSH\d\d$/.test(r.code));
  assert.equal(bare.map((r) => `${r.where}: '${r.message}' (${r.code ?? 'no errcode'})`), []);
});

R('each code is in the register exactly once, in its context\'s range', () => {
  const seen = new Map<string, number>();
  for (const c of REGISTER) seen.set(c.code, (seen.get(c.code) ?? 0) + 1);
  assert.equal([...seen].filter(([, n]) => n > 1).map(([c]) => c), [], 'listed twice');
  assert.equal(REGISTER.filter((c) => !RANGES[c.context]!.test(c.code)).map((c) => `${c.code} (${c.context})`), [], 'outside its context\'s range');
  assert.equal(REGISTER.filter((c) => !c.meaning || !c.remedy).map((c) => c.code), [], 'an entry without meaning or remedy');
});

R('every code raised in sql/ is in the register, raised by its own context', () => {
  const known = new Map(REGISTER.map((c) => [c.code, c]));
  assert.equal(raises.filter((r) => r.code && !known.has(r.code)).map((r) => `${r.where} raises ${r.code}`), [], 'not in the register');
  assert.equal(raises.filter((r) => r.code && known.has(r.code) && known.get(r.code)!.context !== r.schema)
    .map((r) => `${r.where} raises ${r.code}, which is ${known.get(r.code!)!.context}'s`), [], 'raised by another context');
});

R('one code, one meaning: every place that raises a code says the same thing', () => {
  const byCode = new Map<string, Set<string>>();
  for (const r of raises) if (r.code) byCode.set(r.code, (byCode.get(r.code) ?? new Set()).add(r.message));
  const collisions = [...byCode].filter(([, m]) => m.size > 1).map(([c, m]) => `${c}: ${[...m].map((x) => `'${x}'`).join(' / ')}`);
  assert.equal(collisions, []);
});

R('every register entry is raised somewhere', () => {
  const raised = new Set(raises.map((r) => r.code));
  assert.equal(REGISTER.filter((c) => !raised.has(c.code)).map((c) => c.code), []);
});


async function raised(store: Store, code: string, hint?: string): Promise<unknown> {
  try {
    if (hint) await store.admin.unsafe(`do $$ begin raise exception 'node % cannot be a hub', 'a1' using errcode = '${code}', hint = '${hint}'; end $$`);
    else await store.admin.unsafe(`do $$ begin raise exception 'node % cannot be a hub', 'a1' using errcode = '${code}'; end $$`);
  } catch (err) { return err; }
  throw new Error('nothing was raised');
}

R('storeError: a known code becomes a MeshError carrying the code, its context and the remedy', async ({ store }) => {
  const e = storeError(await raised(store, 'MSH62', 'give it --dialable'));
  assert.instance(e, MeshError);
  assert.is((e as MeshError).code, 'MSH62');
  assert.is((e as MeshError).context, 'overlay');
  assert.is(e.message, 'node a1 cannot be a hub: give it --dialable (MSH62).');
  const plain = storeError(await raised(store, 'MSH62')) as MeshError;
  assert.is(plain.remedy, REGISTER.find((c) => c.code === 'MSH62')!.remedy, 'without a hint, the register says the remedy');
});

R('storeError: an MSH code the register does not know is said to be a bug, not passed off as a refusal', async ({ store }) => {
  const e = storeError(await raised(store, 'MSH99'));
  assert.instance(e, UnregisteredCode);
  assert.not.instance(e, MeshError);
  assert.match(e.message, /MSH99, a code src\/store\/errors\.ts does not list \(a bug in mesh/);
});

R('storeError: any other error passes through as it came', async ({ store }) => {
  const err = await store.admin`select 1 / 0`.then(() => undefined, (x) => x);
  assert.is(storeError(err), err);
});

R.run();
