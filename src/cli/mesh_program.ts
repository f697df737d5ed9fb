// The `mesh` program: its description and every noun's commands, registered
// and not yet run. mesh.ts runs it; the CLI reference (docs/reference/cli.md)
// is generated from it.
import { program, type Program } from '../sys/program.js';
import { registerControl } from './control.js';
import { registerToken } from './token.js';
import { registerNode } from './node.js';
import { registerModule } from './module.js';
import { registerDeclaration } from './declaration.js';
import { registerBuild } from './build.js';
import { registerOverlay } from './overlay.js';
import { registerSecret } from './secret.js';
import { registerProvision } from './provision.js';
import { registerFirewall } from './firewall.js';
import { registerAudit } from './audit.js';
import { registerDrift } from './drift.js';
import { registerConsole } from './console.js';
import { registerRollout } from './rollout.js';
import { registerBroker } from './broker.js';

export const MESH_DESCRIBE =
  "Run a fleet of machines from one declared truth. Every command reads its store from MESH_STORE_<CONTEXT> and the control plane's files from MESH_HOME (default /etc/mesh).";

/** `mesh` with every noun's commands. */
export function meshProgram(): Program {
  const p = program('mesh', MESH_DESCRIBE);
  p.noun('control plane', registerControl);
  p.noun('token', registerToken);
  p.noun('node', registerNode);
  p.noun('module', registerModule);
  p.noun('declaration', registerDeclaration);
  p.noun('build', registerBuild);
  p.noun('overlay', registerOverlay);
  p.noun('secret', registerSecret);
  p.noun('provision', registerProvision);
  p.noun('firewall', registerFirewall);
  p.noun('audit', registerAudit);
  p.noun('drift', registerDrift);
  p.noun('console', registerConsole);
  p.noun('rollout', registerRollout);
  p.noun('broker', registerBroker);
  return p;
}
