// R3: once a minute, the node's name and nothing else. Not mandatory and not
// confirmed: losing one is nothing, the next is a minute away, and the mesh
// reads a gap rather than counting arrivals.
import type { Channel } from 'amqplib';
import { EXCHANGE } from '../src/broker/topology.js';
import { refuse } from '../src/sys/errors.js';

export function publishHeard(ch: Channel, node: string, user: string): void {
  ch.publish(EXCHANGE, 'heard', Buffer.from(node), { userId: user });
}

export function heardSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.MESH_HOST_HEARD_SECONDS ?? 60);
  if (!Number.isFinite(v) || v <= 0)
    throw refuse('MSHG4', 'MESH_HOST_HEARD_SECONDS must be a positive number of seconds');
  return v;
}
