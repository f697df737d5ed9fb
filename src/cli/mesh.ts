#!/usr/bin/env node
// The operator's CLI: sade wiring only, one file a noun. Each command maps to
// one function of a context that returns data; it is printed here as a table
// for a person or JSON with --json.
import { phase } from '../sys/phases.js';
import { meshProgram } from './mesh_program.js';

phase('main');

// Only the noun the command names is loaded (nouns.ts says why); all of them at once, in order, otherwise.
const p = await meshProgram(process.argv.slice(2));
phase('loaded');
p.run();
