// The `mesh` commands of the overlay area. Registered from src/cli/commands.ts.
import type { Sade } from 'sade';

export function registerOverlay(_prog: Sade): void {}
