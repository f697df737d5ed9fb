// Reading /proc: is a recorded process still the one we started, and is
// anything left alive in its process group.
import { readFile, readdir } from 'node:fs/promises';

interface Stat {
  state: string;
  pgrp: number;
  start: string; // clock ticks since boot: with the pid, names one process for the machine's uptime
}

export async function procStat(pid: number): Promise<Stat | null> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // comm (field 2) may hold spaces and parentheses: split after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: f[0]!, pgrp: Number(f[2]), start: f[19]! };
}

/** The process `pid` is running and started at `start` (not a zombie, not a reused pid). */
export async function isRunning(pid: number, start: string): Promise<boolean> {
  const s = await procStat(pid);
  return s !== null && s.start === start && s.state !== 'Z' && s.state !== 'X';
}

/** Any live (non-zombie) process whose process group is `pgid`. */
export async function groupAlive(pgid: number): Promise<boolean> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = await procStat(Number(name));
    if (s && s.pgrp === pgid && s.state !== 'Z' && s.state !== 'X') return true;
  }
  return false;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
