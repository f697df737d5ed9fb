#!/usr/bin/env node
// The operator's CLI. Each command maps to one function that returns data.
import sade from 'sade';
import { wrap } from './wrap.js';
import { migrateCommand } from './migrate_summary.js';

const prog = sade('mesh').version('0.1.0')
  .describe('Run a fleet of machines from one declared truth. Every command reads its store from MESH_STORE_<CONTEXT> and the control plane\'s files from MESH_HOME (default /etc/mesh).');

prog.command('migrate')
  .describe([
    'Bring every context\'s schema up to date (inventory, catalogue, assignment, secret, provision, overlay).',
    'Each context migrates as its own role from MESH_STORE_<CONTEXT>. Refuses, before anything runs, an edited',
    'migration that already ran, one numbered below one that ran, duplicate numbers, misnamed or empty files.',
    'Waits up to 3 minutes for a cold database (MESH_STORE_WAIT_SECONDS to change).',
  ])
  .example('migrate')
  .action(wrap(async () => { console.log(await migrateCommand()); }));

export { prog };
const { register } = await import('./commands.js');
register(prog);
prog.parse(process.argv);
