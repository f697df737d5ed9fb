// The `mesh` commands of the build area. Registered from src/cli/commands.ts.
import type { Sade } from 'sade';

export function registerBuild(_prog: Sade): void {}
