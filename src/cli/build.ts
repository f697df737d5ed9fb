// The `mesh` commands of the build area: sources, builds, builders and the
// catalogue (B1, B2). Registered from src/cli/commands.ts.
import type { Sade } from 'sade';
import { wrap } from './wrap.js';
import { emit, table } from './print.js';
import { build, parseTimeout } from '../catalogue/build.js';
import { setSource } from '../catalogue/source.js';
import { moduleList, describe } from '../catalogue/module_list.js';
import { builderAdd } from '../catalogue/builder_add.js';

export function registerBuild(prog: Sade): void {
  prog.command('module source <module>')
    .describe([
      'Say where MODULE is built from: a git repository with a Containerfile (in --path, default the root).',
      'Builders clone it; the control plane only records it. --ref is the branch or tag the module follows (default HEAD,',
      'the default branch): `mesh module list` says "behind" when it has moved past the commit last built.',
    ])
    .option('--git', 'The repository: a URL git can clone, or a path on the build machine')
    .option('--path', 'The folder in the repository holding the Containerfile', '.')
    .option('--ref', 'The branch or tag the module follows', 'HEAD')
    .option('--json', 'Print as JSON')
    .example('module source web --git https://git.example.org/web.git --path image --ref main')
    .action(wrap(async (m: string, o: { git?: string; path?: string; ref?: string; json?: boolean }) =>
      emit(await setSource(String(m), { git: o.git, path: o.path, ref: o.ref }), o, (d) => `module ${d.module} builds from ${d.git} (${d.path}) following ${d.ref}`)));

  prog.command('build <module>')
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
    .action(wrap(async (m: string, o: { ref?: string; timeout?: string; json?: boolean }) => {
      const timeoutMs = parseTimeout(String(o.timeout ?? '30m'));
      const a = await build(String(m), {
        ref: o.ref === undefined ? undefined : String(o.ref),
        timeoutMs,
        progress: (line, builder) => process.stderr.write(`  [${builder}] ${line}\n`),
      });
      emit(a, o, (d) => d.ok
        ? `built ${d.module} from ${d.commit} on ${d.builder}: ${d.image}@${d.digest} (version ${d.version})`
        : `build of ${d.module} failed on ${d.builder}: ${d.error}${d.log ? `\n--- end of its log ---\n${d.log}` : ''}`);
      if (!a.ok) {
        process.stderr.write(`mesh: the build of ${a.module} failed (${a.error}): fix the source and run mesh build ${a.module} again.\n`);
        process.exitCode = 4;
      }
    }));

  prog.command('module list')
    .describe([
      'The catalogue: every module, its version, where it came from (built from a commit, handed over by hand, shipped),',
      'whether it is behind its source, and the machines it runs on. --refresh first looks where each source\'s ref points',
      'now (git ls-remote). The same answer as select * from catalogue.module_status.',
    ])
    .option('--refresh', 'Record each source\'s current head before answering')
    .option('--json', 'Print as JSON')
    .action(wrap(async (o: { refresh?: boolean; json?: boolean }) => {
      const r = await moduleList({ refresh: o.refresh });
      for (const f of r.refreshFailed) process.stderr.write(`mesh: could not look at the source of ${f.module} (${f.error}); its "behind" is from the last sighting.\n`);
      emit(r.modules, o, (rows) => table(rows.map(describe), ['module', 'version', 'origin', 'state', 'image', 'runs_on']));
    }));

  prog.command('builder add <name>')
    .describe([
      'Make a broker account for a build machine (it may read the build queue and write the mesh exchange, nothing else)',
      'and print the line to paste there: mesh-builder enrol <line>. The line is its credential, shown once. Adding the',
      'same name again replaces the password, so an old line stops working.',
    ])
    .option('--json', 'Print as JSON')
    .example('builder add build1')
    .action(wrap(async (n: string, o: { json?: boolean }) => emit(await builderAdd(String(n)), o, (d) => d.command)));
}
