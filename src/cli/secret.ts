// The `mesh` commands of the secret area. Registered from src/cli/commands.ts.
import type { Sade } from 'sade';

export function registerSecret(_prog: Sade): void {}
