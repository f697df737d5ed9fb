// A module file's resource refused by the one resource parser (the host's,
// src/wire/parse_resources.ts) is said to the operator with the code of the
// rule it broke: the host reports all of them as malformed (MSHN0), but the
// person writing the file needs to know which fix, and a program reading
// --json which refusal.
import { refuse } from '../sys/errors.js';
import { WireError } from '../wire/envelope.js';
import type { ResourceFault } from '../wire/parse_resources.js';

/** ERR as the operator's refusal when it is a resource's flaw; anything else as it came. */
export function moduleRefusal(err: unknown): unknown {
  if (!(err instanceof WireError) || !('flaw' in err)) return err;
  // A remedy of its own (what to declare instead of a composed kind) is said once, as the remedy.
  const { flaw, fix: remedy } = err as ResourceFault;
  const said = remedy ? err.said.slice(0, -`: ${remedy}`.length) : err.said;
  switch (flaw) {
    case 'kind':
      return refuse('MSHM0', said, undefined, err);
    case 'composed':
      return refuse('MSH31', said, remedy, err);
    case 'field':
      return refuse('MSHM1', said, undefined, err);
    case 'missing':
      return refuse('MSHM2', said, undefined, err);
    case 'value':
      return refuse('MSHM3', said, undefined, err);
    case 'path':
      return refuse('MSHM7', said, undefined, err);
    case 'id':
      return refuse('MSHM4', said, undefined, err);
    case 'twice':
      return refuse('MSHM5', said, undefined, err);
    case 'unit':
      return refuse('MSHM6', said, undefined, err);
  }
  return err;
}
