// mesh-builder's commands, registered in the shared program shell and not yet
// run: cli.ts runs them, and the CLI reference (docs/reference/cli.md) is
// generated from them.
import { readFileSync } from 'node:fs';
import { program, type Program } from '../sys/program.js';
import { log } from '../sys/log.js';
import { builderDir } from './credential.js';
import { enrolBuilder } from './enrol.js';
import { runBuilder } from './run.js';
import { refuse } from '../sys/errors.js';

/** `mesh-builder` with its commands, registered and not yet run. */
export function builderProgram(): Program {
  const p = program(
    'mesh-builder',
    'Builds module images for the mesh. Keeps its broker credential in MESH_BUILDER_DIR (default /var/lib/mesh-builder).',
  );

  p.prog
    .command('enrol [line]')
    .describe([
      'Keep the credential `mesh builder add NAME` printed on the control plane, read on standard input: the line it prints',
      'is `echo LINE | mesh-builder enrol`. A line on the command line is refused: every user of the machine could read it',
      'there. The credential is checked against the broker (pinned to its certificate fingerprint), its password replaced',
      'by one this machine chooses (mesh serve sets it: the printed line stops working), and saved 0600; `mesh-builder',
      'run` reads it from there.',
    ])
    .example('enrol < line.txt')
    .action(
      p.wrap(async (argv: string | undefined) => {
        if (argv !== undefined)
          throw refuse(
            'MSHU5',
            "a builder line on mesh-builder enrol's command line: every user of this machine can read it in the process list, and the shell keeps it in its history",
            'give it on standard input as mesh builder add prints it: echo LINE | mesh-builder enrol',
          );
        const r = await enrolBuilder(readFileSync(0, 'utf8'), builderDir());
        console.log(`enrolled as builder ${r.name} with the broker at ${r.broker}`);
      }),
    );

  p.prog
    .command('run')
    .describe([
      "Take build requests off the shared build queue one at a time: clone the module's source at the requested commit,",
      'build its Containerfile with podman, push to MESH_BUILDER_REGISTRY (HOST:PORT, default 127.0.0.1:5000; plain HTTP only',
      'on loopback), and answer with the commit and manifest digest. A failed build is answered with its log tail. Each',
      'request is acked only once its answer is confirmed, so one this builder dies on goes to another. Base images are',
      'pulled per MESH_BUILDER_PULL (missing, never, always, newer). SIGTERM abandons the current build and hands it back.',
    ])
    .action(
      p.wrap(async () => {
        const stop = new AbortController();
        for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
        await runBuilder({ dir: builderDir(), env: process.env, log, signal: stop.signal });
      }),
    );
  return p;
}
