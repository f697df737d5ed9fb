// `mesh module source MODULE --git URL [--image REGISTRY/REPOSITORY]`: where a
// module is built from and the one repository its images may come from (B3).
// The control plane only records them; builders clone the one, and a build
// result naming another repository is refused (sql/catalogue).
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import { gitUrl, REF, SOURCE_PATH, IMAGE } from '../wire/build.js';
import { refuse } from '../sys/errors.js';

export async function setSource(module: string, opts: { git?: string; path?: string; ref?: string; image?: string }) {
  nodeName(module, 'module name');
  if (!gitUrl(opts.git))
    throw refuse(
      'MSH32',
      '--git does not name a repository',
      'give a URL git can clone, or a path on the build machine (not starting with "-")',
    );
  const git = opts.git;
  const path = opts.path ?? '.';
  if (!SOURCE_PATH.test(path))
    throw refuse(
      'MSH33',
      `--path ${JSON.stringify(path)} is not a relative folder inside the repository`,
      'use letters, digits, . _ / -; no ".."',
    );
  const ref = opts.ref ?? 'HEAD';
  if (!REF.test(ref)) throw refuse('MSH34', `--ref ${JSON.stringify(ref)} is not a branch or tag name`);
  if (opts.image !== undefined && !(IMAGE.test(opts.image) && /^[^/]+\/[^/]/.test(opts.image)))
    throw refuse('MSHU7', `--image ${JSON.stringify(opts.image)} is not REGISTRY/REPOSITORY`);
  return withStore('catalogue', async (sql) => {
    const [row] = await sql<{ image: string }[]>`
      select catalogue.set_source(module_name => ${module}::text, source_url => ${git}::text, source_path => ${path}::text,
        source_ref => ${ref}::text, source_image => ${opts.image ?? null}::text) as image`;
    return { module, git, path, ref, image: row!.image };
  });
}
