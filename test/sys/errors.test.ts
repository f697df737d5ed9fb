// The one register of error codes (src/sys/errors.ts) against what sql/
// raises and what src/, host/ and bundle/ refuse with: one code, one meaning,
// one context; nothing raised that the register does not know, nothing in the
// register that nothing raises, no code that no test asserts. And storeError
// maps a code, never a prefix or a message; refuse() makes the same error.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { REGISTER, storeError, refuse, errorJson, MeshError, UnregisteredCode } from '../../src/sys/errors.js';
import { sqlRaises } from './sql_codes.js';
import { tsRaises, testedCodes, raisesIn } from './ts_codes.js';
import { freshStore, type Store } from '../harness/store.js';

// The register's header comment says these; a context whose decade is full goes on in a letter's.
const RANGES: Record<string, RegExp> = {
  inventory: /^MSH([01VSXOZ]\d|F[0-3]|T[2-5])$/,
  assignment: /^MSH([2AVZOR]\d|Y[23]|Q[1-9]|B[3-9])$/,
  catalogue: /^MSH([3MPZ]\d|U[5-9])$/,
  secret: /^MSH(4\d|Q0)$/,
  provision: /^MSH(5\d|B[0-2])$/,
  overlay: /^MSH(6\d|T[1-9]|Y[014])$/,
  audit: /^MSH7\d$/,
  host: /^MSH([8CGIKXZO]\d|U[0-4]|F[4-9])$/,
  bundle: /^MSH([9DL]\d|T0)$/,
  store: /^MSH[EHJR]\d$/,
  wire: /^MSH[NSZ]\d$/,
};

const R = suite<{ store: Store }>('the register of error codes');
R.before(async (ctx) => {
  ctx.store = await freshStore();
});
R.after(async (ctx) => {
  await ctx.store?.drop();
});
const raises = sqlRaises();
const refusals = tsRaises();

R('the scan finds the raises (a scanner that reads nothing proves nothing)', () => {
  assert.ok(raises.length >= REGISTER.filter((c) => !c.raisedIn).length, `${raises.length} raises found`);
  assert.ok(raises.some((r) => r.where === 'overlay.set_hub' && r.code === 'MSH62'));
});

R('every raise carries one of our codes', () => {
  const bare = raises.filter((r) => !r.code || !/^MSH[0-9A-Z]{2}$/.test(r.code));
  assert.equal(
    bare.map((r) => `${r.where}: '${r.message}' (${r.code ?? 'no errcode'})`),
    [],
  );
});

R("each code is in the register exactly once, in its context's range", () => {
  const seen = new Map<string, number>();
  for (const c of REGISTER) seen.set(c.code, (seen.get(c.code) ?? 0) + 1);
  assert.equal(
    [...seen].filter(([, n]) => n > 1).map(([c]) => c),
    [],
    'listed twice',
  );
  assert.equal(
    REGISTER.filter((c) => !RANGES[c.context]!.test(c.code)).map((c) => `${c.code} (${c.context})`),
    [],
    "outside its context's range",
  );
  assert.equal(
    REGISTER.filter((c) => !c.meaning || !c.remedy).map((c) => c.code),
    [],
    'an entry without meaning or remedy',
  );
});

R('every code raised in sql/ is in the register, raised by its own context', () => {
  const known = new Map(REGISTER.map((c) => [c.code, c]));
  assert.equal(
    raises.filter((r) => r.code && !known.has(r.code)).map((r) => `${r.where} raises ${r.code}`),
    [],
    'not in the register',
  );
  assert.equal(
    raises
      .filter((r) => r.code && known.has(r.code) && known.get(r.code)!.context !== r.schema)
      .map((r) => `${r.where} raises ${r.code}, which is ${known.get(r.code!)!.context}'s`),
    [],
    'raised by another context',
  );
});

R('one code, one meaning: every place that raises a code says the same thing', () => {
  const byCode = new Map<string, Set<string>>();
  for (const r of raises) if (r.code) byCode.set(r.code, (byCode.get(r.code) ?? new Set()).add(r.message));
  const collisions = [...byCode]
    .filter(([, m]) => m.size > 1)
    .map(([c, m]) => `${c}: ${[...m].map((x) => `'${x}'`).join(' / ')}`);
  assert.equal(collisions, []);
});

R('every register entry is raised somewhere, in sql/ or by refuse()', () => {
  const raised = new Set([...raises.map((r) => r.code), ...refusals.map((r) => r.code)]);
  assert.equal(
    REGISTER.filter((c) => !raised.has(c.code)).map((c) => c.code),
    [],
  );
});

R('the TypeScript scan finds the refusals, and reads a computed code as one it cannot check', () => {
  assert.ok(
    refusals.some((r) => r.file === 'src/store/promote.ts' && r.code === 'MSHE0'),
    `${refusals.length} refusals found`,
  );
  assert.equal(
    raisesIn(
      "throw refuse('MSH80', `x`);\nthrow refuse(code, 'y');\nthis.refuse(1);\n// refuse('MSH81', ...) in a comment",
    ).map((r) => r.code),
    ['MSH80', '?'],
  );
});

R(
  'every code TypeScript refuses with is a literal in the register, and the entry names each file that raises it',
  () => {
    const known = new Map(REGISTER.map((c) => [c.code, c]));
    assert.equal(
      refusals.filter((r) => !known.has(r.code)).map((r) => `${r.file}:${r.line} refuses with ${r.code}`),
      [],
      'not in the register (or not a literal)',
    );
    const files = new Map<string, Set<string>>();
    for (const r of refusals) files.set(r.code, (files.get(r.code) ?? new Set()).add(r.file));
    const wrong = REGISTER.filter(
      (c) => (c.raisedIn ?? []).join(' ') !== [...(files.get(c.code) ?? [])].sort().join(' '),
    ).map(
      (c) =>
        `${c.code}: the register says ${JSON.stringify(c.raisedIn ?? [])}, the tree raises it in ${JSON.stringify([...(files.get(c.code) ?? [])].sort())}`,
    );
    assert.equal(wrong, []);
  },
);

R('every code in the register is asserted by some test under test/', () => {
  const tested = testedCodes();
  assert.equal(
    REGISTER.filter((c) => !tested.has(c.code)).map((c) => `${c.code} (${c.meaning})`),
    [],
  );
});

R(
  "refuse: a TypeScript refusal is the MeshError a SQL raise becomes: code, context, the remedy given or the register's",
  () => {
    const e = refuse(
      'MSHE0',
      '/x holds no PostgreSQL cluster',
      "give the standby's data directory with --data",
    ) as MeshError;
    assert.instance(e, MeshError);
    assert.is(e.code, 'MSHE0');
    assert.is(e.context, 'store');
    assert.is(e.message, "/x holds no PostgreSQL cluster: give the standby's data directory with --data (MSHE0).");
    assert.is((refuse('MSHE0', 'no') as MeshError).remedy, REGISTER.find((c) => c.code === 'MSHE0')!.remedy);
    assert.equal(errorJson(e), { error: { code: 'MSHE0', context: 'store', message: e.message, remedy: e.remedy } });
    assert.equal(errorJson(new Error('plain')), { error: { message: 'plain' } });
    assert.is(storeError(e), e, 'a refusal made inside a transaction passes storeError as it is, its remedy said once');
  },
);

R('refuse: a code the register lacks is said to be the bug it is', () => {
  const e = refuse('MSHZZ', 'anything');
  assert.instance(e, UnregisteredCode);
  assert.not.instance(e, MeshError);
});

async function raised(store: Store, code: string, hint?: string): Promise<unknown> {
  try {
    if (hint)
      await store.admin.unsafe(
        `do $$ begin raise exception 'node % cannot be a hub', 'a1' using errcode = '${code}', hint = '${hint}'; end $$`,
      );
    else
      await store.admin.unsafe(
        `do $$ begin raise exception 'node % cannot be a hub', 'a1' using errcode = '${code}'; end $$`,
      );
  } catch (err) {
    return err;
  }
  throw new Error('nothing was raised');
}

R('storeError: a known code becomes a MeshError carrying the code, its context and the remedy', async ({ store }) => {
  const e = storeError(await raised(store, 'MSH62', 'give it --dialable'));
  assert.instance(e, MeshError);
  assert.is((e as MeshError).code, 'MSH62');
  assert.is((e as MeshError).context, 'overlay');
  assert.is(e.message, 'node a1 cannot be a hub: give it --dialable (MSH62).');
  const plain = storeError(await raised(store, 'MSH62')) as MeshError;
  assert.is(
    plain.remedy,
    REGISTER.find((c) => c.code === 'MSH62')!.remedy,
    'without a hint, the register says the remedy',
  );
});

R(
  'storeError: an MSH code the register does not know is said to be a bug, not passed off as a refusal',
  async ({ store }) => {
    assert.not.ok(
      REGISTER.some((c) => c.code === 'MSHZZ'),
      'MSHZZ stays unregistered: this test needs a code nothing means',
    );
    const e = storeError(await raised(store, 'MSHZZ'));
    assert.instance(e, UnregisteredCode);
    assert.not.instance(e, MeshError);
    assert.match(e.message, /MSHZZ, a code src\/sys\/errors\.ts does not list \(a bug in mesh/);
  },
);

R('storeError: any other error passes through as it came', async ({ store }) => {
  const err = await store.admin`select 1 / 0`.then(
    () => undefined,
    (x) => x,
  );
  assert.is(storeError(err), err);
});

R.run();
