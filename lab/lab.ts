#!/usr/bin/env node
// `npm run lab [-- COMMAND]`: a real mesh on this machine, in network namespaces.
//   up (default)      bring it up and show nodes, overlay and the ping matrix
//   show              show them again
//   scenario NAME     run one scenario (join, what-if, broker, away, forged, drift, firewall, cluster), or `all`
//   down              take everything down: no namespace, process or interface left
// The lab lives in MESH_LAB_DIR (default /tmp/mesh-lab).
import { labUp, labDown, labShow } from './lifecycle.js';
import { LabHandle, labDir } from './handle.js';
import { SCENARIOS, scenario } from './scenarios/index.js';
import type { Scenario } from './scenarios/scenario.js';

const say = (l: string) => console.log(l);

async function loaded(): Promise<LabHandle> {
  const h = LabHandle.load();
  if (!h || !(await h.alive(h.hub))) throw new Error(`no lab is up in ${labDir()}: bring one up with npm run lab`);
  return h;
}

export async function runScenarios(h: LabHandle, list: Scenario[], out: (l: string) => void = say): Promise<string[]> {
  const failed: string[] = [];
  for (const s of list) {
    const t = Date.now();
    out(`\n== scenario ${s.name}: ${s.proves}`);
    try {
      await s.run(h, (l) => out(`   ${l}`));
      out(`== ${s.name}: passed (${Math.round((Date.now() - t) / 1000)}s)`);
    } catch (err) {
      out(`== ${s.name}: FAILED: ${(err as Error).message}`);
      failed.push(s.name);
    }
  }
  return failed;
}

async function main(argv: string[]): Promise<number> {
  const [cmd = 'up', arg] = argv;
  switch (cmd) {
    case 'up': {
      const h = await labUp({ say });
      const open = await labShow(h, say);
      say(
        `\nscenarios: npm run lab -- scenario all (or one of ${SCENARIOS.map((s) => s.name).join(', ')}); tear down: npm run lab -- down`,
      );
      return open ? 0 : 1;
    }
    case 'show':
      return (await labShow(await loaded(), say)) ? 0 : 1;
    case 'scenario': {
      if (!arg) throw new Error(`name a scenario: ${SCENARIOS.map((s) => s.name).join(', ')}, or all`);
      const list = arg === 'all' ? SCENARIOS : [scenario(arg)];
      const failed = await runScenarios(await loaded(), list);
      say(
        failed.length
          ? `\n${failed.length} of ${list.length} failed: ${failed.join(', ')}`
          : `\nall ${list.length} passed`,
      );
      return failed.length ? 1 : 0;
    }
    case 'down':
      await labDown({ say });
      return 0;
    default:
      throw new Error(`unknown lab command ${JSON.stringify(cmd)}: up, show, scenario NAME|all, down`);
  }
}

// Only as a program: the lab test imports runScenarios.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`lab: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
