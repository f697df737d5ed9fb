// `mesh build`, `mesh builder add`: builds are work on one shared queue (B1),
// done by build machines the control plane gives an account.
import type { Program } from '../sys/program.js';
import { emit } from './print.js';
// Both commands' work (and amqplib with it) is loaded when they run, not at every command's start.

export function registerBuild(p: Program): void {
  p.prog
    .command('build <module>')
    .describe([
      'Build MODULE from its source on a build machine and wait for the answer. The request is recorded in SQL, put on the',
      'one shared build queue, and taken by one mesh-builder, which clones the source at --ref, builds the image with podman,',
      'pushes it and answers with the commit and manifest digest; the module then runs image@digest (its version moves).',
      'Progress lines go to stderr as the builder sends them. A failed build is an answer with its log tail (exit 4);',
      'no answer within --timeout is said as such (exit 5) and the request stays queued.',
    ])
    .option('--ref', 'A branch, tag or commit to build (default: the ref the source follows)')
    .option('--timeout', 'How long to wait for the answer: 90s, 30m, 2h', '30m')
    .option('--json', 'Print the answer as JSON')
    .example('build web')
    .example('build web --ref v1.4 --timeout 10m')
    .action(
      p.wrap(async (m: string, o: { ref?: string; timeout?: string; json?: boolean }) => {
        const { build, parseTimeout } = await import('../catalogue/build.js');
        const timeoutMs = parseTimeout(String(o.timeout ?? '30m'));
        const a = await build(String(m), {
          ref: o.ref === undefined ? undefined : String(o.ref),
          timeoutMs,
          progress: (line, builder) => process.stderr.write(`  [${builder}] ${line}\n`),
        });
        emit(a, o, (d) =>
          d.ok
            ? `built ${d.module} from ${d.commit} on ${d.builder}: ${d.image}@${d.digest} (version ${d.version})`
            : `build of ${d.module} failed on ${d.builder}: ${d.error}${d.log ? `\n--- end of its log ---\n${d.log}` : ''}`,
        );
        if (!a.ok) {
          process.stderr.write(
            `mesh: the build of ${a.module} failed (${a.error}): fix the source and run mesh build ${a.module} again.\n`,
          );
          process.exitCode = 4;
        }
      }),
    );

  p.prog
    .command('builder add <name>')
    .describe([
      'Make a broker account for a build machine (it may read the build queue and write the mesh exchange, nothing else)',
      'and print the line to paste there: echo LINE | mesh-builder enrol. The line is its credential, shown once. Adding the',
      'same name again replaces the password, so an old line stops working.',
    ])
    .option('--json', 'Print as JSON')
    .example('builder add build1')
    .action(
      p.wrap(async (n: string, o: { json?: boolean }) =>
        emit(await (await import('../catalogue/builder_add.js')).builderAdd(String(n)), o, (d) => d.command),
      ),
    );
}
