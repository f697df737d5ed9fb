#!/usr/bin/env node
// mesh-builder: the program a build machine runs. Not the control plane,
// which must run nothing on a machine; not the host, which would then need a
// container runtime and git on every machine. It holds its own broker
// credential and nothing else. Its commands are in builder_program.ts.
import { builderProgram } from './builder_program.js';

builderProgram().run();
