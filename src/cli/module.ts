// `mesh module add|source|list`: the catalogue (B2): what modules exist, at
// which version, from which commit, whether behind their source, where they run.
import { afterChange, redeclareLine } from './redeclare.js';
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { moduleAdd } from '../catalogue/module_add.js';
import { setSource } from '../catalogue/source.js';
import { moduleList, describe } from '../catalogue/module_list.js';

export function registerModule(p: Program): void {
  p.prog
    .command('module add <file>')
    .describe([
      'Add or replace a module from a JSON file: {"name": "web", "resources": [...]}. Each resource has a kind (file, directory,',
      'service, container, wireguard, secret, or opening: a port the module serves, {"kind": "opening", "name", "proto", "port", "from": "any|site:S|module:M"}) and its fields; ids are filled in as kind:path or kind:name. Checked by the same',
      'parser every host runs, so a bad field is refused here, named, before any node sees it. The version moves only when the resources change.',
    ])
    .option('--json', 'Print as JSON')
    .example('module add web.json')
    .action(
      p.wrap(async (file: string, o: { json?: boolean }) =>
        emit(
          await moduleAdd(String(file)).then((m) => afterChange(m, [m.name])),
          o,
          (d) => `module ${d.name} version ${d.version} (${d.resources} resources)\n${redeclareLine(d.redeclared, d)}`,
        ),
      ),
    );

  p.prog
    .command('module source <module>')
    .describe([
      'Say where MODULE is built from: a git repository with a Containerfile (in --path, default the root).',
      'Builders clone it; the control plane only records it. --ref is the branch or tag the module follows (default HEAD,',
      'the default branch): `mesh module list` says "behind" when it has moved past the commit last built. --image is the',
      'one registry and repository its images may come from: a build naming another is refused and recorded as failed, so',
      'a builder cannot choose what the nodes run. Left out, a source keeps the one it had; a new one takes',
      "127.0.0.1:5000/MODULE, mesh-builder's default.",
    ])
    .option('--git', 'The repository: a URL git can clone, or a path on the build machine')
    .option('--path', 'The folder in the repository holding the Containerfile', '.')
    .option('--ref', 'The branch or tag the module follows', 'HEAD')
    .option('--image', 'REGISTRY/REPOSITORY its images are pushed to and pulled from')
    .option('--json', 'Print as JSON')
    .example(
      'module source web --git https://git.example.org/web.git --path image --ref main --image registry.example.org:5000/web',
    )
    .action(
      p.wrap(async (m: string, o: { git?: string; path?: string; ref?: string; image?: string; json?: boolean }) =>
        emit(
          await setSource(String(m), {
            git: o.git,
            path: o.path,
            ref: o.ref,
            image: o.image === undefined ? undefined : String(o.image),
          }),
          o,
          (d) =>
            `module ${d.module} builds from ${d.git} (${d.path}) following ${d.ref}, its images only from ${d.image}`,
        ),
      ),
    );

  p.prog
    .command('module list')
    .describe([
      'The catalogue: every module, its version, where it came from (built from a commit, handed over by hand, shipped),',
      "whether it is behind its source, and the machines it runs on. --refresh first looks where each source's ref points",
      'now (git ls-remote). The same answer as select * from catalogue.module_status.',
    ])
    .option('--refresh', "Record each source's current head before answering")
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { refresh?: boolean; json?: boolean }) => {
        const r = await moduleList({ refresh: o.refresh });
        for (const f of r.refreshFailed)
          process.stderr.write(
            `mesh: could not look at the source of ${f.module} (${f.error}); its "behind" is from the last sighting.\n`,
          );
        emit(r.modules, o, (rows) =>
          table(rows.map(describe), ['module', 'version', 'origin', 'state', 'image', 'runs_on']),
        );
      }),
    );
}
