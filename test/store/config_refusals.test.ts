// A store variable or URL mesh cannot use is refused with its code, before
// any connection is tried: not set, a file missing or readable by others, a
// password in the environment, not a postgres:// URL, a bad host, several
// hosts without asking for the primary.
import { test } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { storeUrl } from '../../src/store/locate.js';
import { parseStoreUrl, driverSessionAttrs } from '../../src/store/hosts.js';
import { MeshError } from '../../src/sys/errors.js';

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.instance(e, MeshError);
    return (e as MeshError).code;
  }
  throw new Error('nothing was refused');
}

test('each store setting mesh cannot use is refused with its own code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-store-config-'));
  try {
    assert.is(
      code(() => storeUrl('inventory', {})),
      'MSHE9',
    );
    assert.is(
      code(() => storeUrl('inventory', { MESH_STORE_INVENTORY: join(dir, 'none') })),
      'MSHH0',
    );
    const open = join(dir, 'url');
    writeFileSync(open, 'postgres://mesh_inventory@127.0.0.1:5432/mesh\n', { mode: 0o644 });
    assert.is(
      code(() => storeUrl('inventory', { MESH_STORE_INVENTORY: open })),
      'MSHH1',
    );
    assert.is(
      code(() => storeUrl('inventory', { MESH_STORE_INVENTORY: 'postgres://mesh_inventory:secret@127.0.0.1/mesh' })),
      'MSHH2',
    );
    assert.is(
      code(() => parseStoreUrl('mysql://x@h/db')),
      'MSHH3',
    );
    assert.is(
      code(() => parseStoreUrl('postgres://a@h:99999/db')),
      'MSHH3',
    );
    assert.is(
      code(() => parseStoreUrl('postgres://a@h1,h:1:2/db')),
      'MSHH4',
    );
    assert.is(
      code(() => driverSessionAttrs('postgres://a@h1,h2/db')),
      'MSHH5',
    );
    assert.is(
      driverSessionAttrs('postgres://a@h1,h2/db?target_session_attrs=read-write'),
      'primary',
      'asked for the primary, it is taken',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
