// The pid file the dispatcher hook reads (host/link/pidfile.ts).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { writePidFile, removePidFile } from '../../host/link/pidfile.js';
import { hostConfig } from '../../host/config.js';

const F = suite('pid file');
const dir = mkdtempSync(join(tmpdir(), 'mesh-pidfile-'));
F.after(() => rmSync(dir, { recursive: true, force: true }));

F('in the state dir unless MESH_HOST_PIDFILE says elsewhere', () => {
  assert.is(hostConfig({}).pidFile, '/var/lib/mesh-host/mesh-host.pid');
  assert.is(hostConfig({ MESH_HOST_PIDFILE: '/run/mesh-host.pid' }).pidFile, '/run/mesh-host.pid');
});

F('written whole, and removed only while it still names this process', () => {
  const f = join(dir, 'sub', 'mesh-host.pid');
  writePidFile(f, 4242);
  assert.is(readFileSync(f, 'utf8'), '4242\n');
  removePidFile(f, 1111); // another process's exit leaves ours alone
  assert.ok(existsSync(f));
  removePidFile(f, 4242);
  assert.not.ok(existsSync(f));
  removePidFile(f, 4242); // gone already: not an error
  writeFileSync(f, 'not a pid');
  removePidFile(f, 4242);
  assert.ok(existsSync(f));
});

F.run();
