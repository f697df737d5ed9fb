#!/usr/bin/env node
// mesh-host: the agent on every machine. It holds one outbound TLS connection
// and listens on nothing, ever. Its commands are in host_program.ts.
import { hostProgram } from './host_program.js';

hostProgram().run();
