// `mesh agent add|list|upgrade`: mesh-host packages and the version the fleet
// must run, declared like any other state and rolled out in waves (V2).
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { afterChange, redeclareLine } from './redeclare.js';
import { addAgentPackage, listAgentPackages } from '../catalogue/agent_package.js';
import { upgradeAgents, agentTargets } from '../assignment/agent_target.js';
import { nodeName } from '../wire/names.js';

export function registerAgent(p: Program): void {
  p.prog
    .command('agent add <file>')
    .describe([
      'Add a mesh-host package (mesh-host_VERSION_ARCH.deb, as npm run deb makes it) that nodes may be upgraded to. Its',
      'version is the one its control file names; its bytes are kept in the store, and mesh serve hands them to each node',
      'over the broker when its declaration names them. The same version with other bytes is refused: a version names one',
      'package.',
    ])
    .option('--json', 'Print as JSON')
    .example('agent add mesh-host_0.2.0_amd64.deb')
    .action(
      p.wrap(async (file: string, o: { json?: boolean }) =>
        emit(
          await addAgentPackage(String(file)),
          o,
          (r) =>
            `mesh-host ${r.version}: ${r.size} bytes, sha256 ${r.sha256}${r.added ? '' : ' (added before: nothing changed)'}`,
        ),
      ),
    );

  p.prog
    .command('agent list')
    .describe(
      'The mesh-host packages added, and each node with a declared version beside the version its reports name.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        const r = { packages: await listAgentPackages(), nodes: await agentTargets() };
        emit(r, o, (x) =>
          [
            x.packages.length ? table(x.packages, ['version', 'size', 'sha256']) : 'no mesh-host package added yet',
            ...(x.nodes.length ? [table(x.nodes as Record<string, unknown>[], ['node', 'declared', 'reported'])] : []),
          ].join('\n'),
        );
      }),
    );

  p.prog
    .command('agent upgrade')
    .describe([
      'Declare the mesh-host version every node (or --node NODE alone) must run: each declaration carries the version and',
      "its package's sha256, the host fetches the package over the broker, checks it, installs it beside the one it runs,",
      'restarts into it and reports. A new agent that does not report within its wait, or ends at once, is switched back',
      'to the version before by the machine itself, and that node reports the upgrade failing. Within mesh rollout hold and',
      'start, it goes out in waves: the next wave only when every node of this one reports the new version. A version for',
      'every node clears the pins --node made.',
    ])
    .option('--to', 'The version, as mesh agent list names it')
    .option('--node', 'This node alone (a pin)')
    .option('--json', 'Print as JSON')
    .example('agent upgrade --to 0.2.0')
    .example('agent upgrade --to 0.2.1-rc1 --node web1')
    .action(
      p.wrap(async (o: { to?: string; node?: string; json?: boolean }) =>
        emit(
          await afterChange(
            await upgradeAgents(String(o.to ?? ''), o.node === undefined ? undefined : nodeName(String(o.node))),
          ),
          o,
          (r) => `${r.nodes} must run mesh-host ${r.version}\n${redeclareLine(r.redeclared, r)}`,
        ),
      ),
    );
}
