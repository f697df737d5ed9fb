// The rest of the CLI: each context's commands register themselves here.
import type { Sade } from 'sade';
export function register(_prog: Sade): void {}
