// R3: once a minute, the node's name and nothing else. Not mandatory and not
// confirmed: losing one is nothing, the next is a minute away, and the mesh
// reads a gap rather than counting arrivals.
import type { Channel } from 'amqplib';
import { EXCHANGE } from '../src/broker/topology.js';

export function publishHeard(ch: Channel, node: string, user: string): void {
  ch.publish(EXCHANGE, 'heard', Buffer.from(node), { userId: user });
}
