// The version of mesh, as package.json says it: the one place it is written.
// Every program prints it (--version); the bundle names its tarball after it.
// dist/src/sys/ in a checkout and in an unpacked bundle alike sits three
// folders below package.json.
import { readFileSync } from 'node:fs';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
