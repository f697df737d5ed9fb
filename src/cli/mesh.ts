#!/usr/bin/env node
// The operator's CLI: sade wiring only, one file a noun. Each command maps to
// one function of a context that returns data; it is printed here as a table
// for a person or JSON with --json.
import { meshProgram } from './mesh_program.js';

// Only the noun the command names is loaded (nouns.ts says why); all of them at once, in order, otherwise.
const p = await meshProgram(process.argv.slice(2));
p.run();
