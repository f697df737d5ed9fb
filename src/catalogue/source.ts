// `mesh module source MODULE --git URL`: where a module is built from. The
// control plane only records it; builders clone it.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import { gitUrl, REF, SOURCE_PATH } from '../wire/build.js';
import { refuse } from '../sys/errors.js';

export async function setSource(module: string, opts: { git?: string; path?: string; ref?: string }) {
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
  return withStore('catalogue', async (sql) => {
    await sql`select catalogue.set_source(module_name => ${module}::text, source_url => ${git}::text, source_path => ${path}::text, source_ref => ${ref}::text)`;
    return { module, git, path, ref };
  });
}
