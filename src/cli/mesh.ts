#!/usr/bin/env node
// The operator's CLI: sade wiring only, one file a noun. Each command maps to
// one function of a context that returns data; it is printed here as a table
// for a person or JSON with --json.
import { program } from '../sys/program.js';
import { nounsFor } from './nouns.js';

const p = program(
  'mesh',
  '0.1.0',
  "Run a fleet of machines from one declared truth. Every command reads its store from MESH_STORE_<CONTEXT> and the control plane's files from MESH_HOME (default /etc/mesh).",
);

// Only the noun the command names is loaded (nouns.ts says why); all of them at once, in order, otherwise.
const nouns = nounsFor(process.argv.slice(2));
const registers = await Promise.all(nouns.map((n) => n.load()));
nouns.forEach((n, i) => p.noun(n.noun, registers[i]!));
p.run();
