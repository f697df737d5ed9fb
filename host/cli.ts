#!/usr/bin/env node
// mesh-host: the agent on every machine. It holds one outbound TLS connection
// and listens on nothing, ever.
import sade from 'sade';
import { enrol } from './enrol.js';
import { runHost } from './run.js';
import { stateDir } from './identity.js';
import { registerOverlayHost } from './overlay/take.js';

const say = (l: string) => process.stderr.write(`${new Date().toISOString()} ${l}\n`);
const fail = (err: unknown) => {
  process.stderr.write(`mesh-host: ${(err as Error).message}\n`);
  if (process.env.MESH_DEBUG) console.error(err);
  process.exitCode = 1;
};

const prog = sade('mesh-host').version('0.1.0')
  .describe('The mesh agent on a machine. Keeps its identity, keys and applied state in MESH_HOST_DIR (default /var/lib/mesh-host).');

prog.command('enrol <token>')
  .describe([
    'Join the mesh with the one-time token `mesh token issue NAME` printed. Makes this machine\'s identity, overlay and',
    'sealing keys, dials the broker pinned to the token\'s certificate fingerprint, and keeps the identity only once the',
    'mesh has recorded it. An enrolled machine refuses a second token rather than take a second identity.',
  ])
  .option('--json', 'Print as JSON')
  .action(async (token: string, o: { json?: boolean }) => {
    try {
      const r = await enrol(String(token), stateDir());
      if (o.json) console.log(JSON.stringify(r, null, 2));
      else console.log(`enrolled as ${r.name} in mesh ${r.mesh}\n  identity ${r.keys.identity}\n  overlay  ${r.keys.overlay}\n  sealing  ${r.keys.sealing}`);
    } catch (err) { fail(err); }
  });

prog.command('run')
  .describe([
    'Hold the link to the broker, apply every verified declaration, keep it applied, report what this machine holds.',
    'Without an identity it waits for `mesh-host enrol`. SIGUSR1 ends the current connection attempt at once (a network came up).',
    'Intervals: MESH_HOST_HEARD_SECONDS (60), MESH_HOST_RECONCILE_SECONDS (300), MESH_HOST_BACKOFF_MIN_SECONDS (2),',
    'MESH_HOST_BACKOFF_MAX_SECONDS (120), MESH_HOST_BACKOFF_RESET_SECONDS (30). Paths a declaration may write: MESH_HOST_ROOTS (colon-separated).',
  ])
  .action(async () => {
    try { await runHost({ dir: stateDir(), env: process.env, log: say }); } catch (err) { fail(err); }
  });

registerOverlayHost(prog);
prog.parse(process.argv);
