// A NOTIFY_SOCKET a test reads, as systemd's is: a unix datagram socket
// (python3 binds it, Node has none). What a process told it, line by line.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { until } from '../declare/helpers.js';

const RECEIVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    d = s.recv(4096)
    print(d.decode().replace("\\n", " "), flush=True)
`;

export interface NotifySocket {
  /** Each datagram received, newlines as spaces ("READY=1 WATCHDOG=1 ..."). */
  said: string[];
  /** How many said WATCHDOG=1. */
  pings(): number;
  stop(): void;
}

/** A socket bound at PATH, read until stop(). */
export async function notifySocket(path: string): Promise<NotifySocket> {
  const said: string[] = [];
  const reader = spawn('python3', ['-c', RECEIVER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  reader.stdout!.on('data', (d: Buffer) => said.push(...d.toString().split('\n').filter(Boolean)));
  await until('the notify socket bound', async () => existsSync(path) && said.includes('bound'));
  return {
    said,
    pings: () => said.filter((l) => l.includes('WATCHDOG=1')).length,
    stop: () => void reader.kill('SIGKILL'),
  };
}
