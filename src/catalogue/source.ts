// `mesh module source MODULE --git URL`: where a module is built from. The
// control plane only records it; builders clone it.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import { gitUrl, REF, SOURCE_PATH } from '../wire/build.js';

export async function setSource(module: string, opts: { git?: string; path?: string; ref?: string }) {
  nodeName(module, 'module name');
  if (!gitUrl(opts.git)) throw new Error('--git must name the repository: a URL git can clone, or a path on the build machine (not starting with "-").');
  const git = opts.git;
  const path = opts.path ?? '.';
  if (!SOURCE_PATH.test(path)) throw new Error(`--path ${JSON.stringify(path)} must be a relative folder inside the repository (letters, digits, . _ / -; no "..").`);
  const ref = opts.ref ?? 'HEAD';
  if (!REF.test(ref)) throw new Error(`--ref ${JSON.stringify(ref)} is not a branch or tag name: use letters, digits, . _ / -, not starting with "-".`);
  return withStore('catalogue', async (sql) => {
    await sql`select catalogue.set_source(module_name => ${module}::text, source_url => ${git}::text, source_path => ${path}::text, source_ref => ${ref}::text)`;
    return { module, git, path, ref };
  });
}
