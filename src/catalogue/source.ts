// `mesh module source MODULE --git URL`: where a module is built from. The
// control plane only records it; builders clone it.
import { connect } from '../store/connect.js';
import { nodeName } from '../wire/names.js';
import { storeError } from '../store/errors.js';
import { gitUrl, REF, SOURCE_PATH } from '../wire/build.js';

export async function setSource(module: string, opts: { git?: string; path?: string; ref?: string }) {
  nodeName(module, 'module name');
  if (!gitUrl(opts.git)) throw new Error('--git must name the repository: a URL git can clone, or a path on the build machine (not starting with "-").');
  const path = opts.path ?? '.';
  if (!SOURCE_PATH.test(path)) throw new Error(`--path ${JSON.stringify(path)} must be a relative folder inside the repository (letters, digits, . _ / -; no "..").`);
  const ref = opts.ref ?? 'HEAD';
  if (!REF.test(ref)) throw new Error(`--ref ${JSON.stringify(ref)} is not a branch or tag name: use letters, digits, . _ / -, not starting with "-".`);
  const sql = await connect('catalogue', { max: 1 });
  try {
    await sql`select catalogue.set_source(module_name => ${module}::text, source_url => ${opts.git}::text, source_path => ${path}::text, source_ref => ${ref}::text)`;
    return { module, git: opts.git, path, ref };
  } catch (err) { throw storeError(err); } finally { await sql.end(); }
}
