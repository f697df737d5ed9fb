// Nodes recorded directly as enrolment leaves them (no broker account or
// queue), for suites that test what SQL derives from the inventory: the peer
// graph, each node's firewall.
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import type { Mesh } from '../harness/mesh.js';
import { cli } from '../declare/helpers.js';
import { parseResources } from '../../src/wire/parse_resources.js';
import type { FirewallResource } from '../../src/wire/resources.js';

/** A node as spend_token leaves it; its overlay key. */
export async function recordNode(mesh: Mesh, name: string, site: string, dialable?: string | null): Promise<Buffer> {
  const overlay = randomBytes(32);
  await mesh.store
    .admin`insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at)
                           values (${name}, ${site}, ${dialable ?? null}, ${randomBytes(32)}, ${overlay}, ${randomBytes(32)}, clock_timestamp())`;
  return overlay;
}

/** hub (site a, dialled at hub.example.net:51820), b1 and b2 (site b), c1 (site c); hub is the overlay's hub, and every node has its address. */
export async function threeSites(mesh: Mesh): Promise<void> {
  await recordNode(mesh, 'hub', 'a', 'hub.example.net:51820');
  await recordNode(mesh, 'b1', 'b');
  await recordNode(mesh, 'b2', 'b');
  await recordNode(mesh, 'c1', 'c');
  await cli(mesh, 'overlay', 'hub', 'hub');
  await mesh.store.admin`select overlay.allocate_addresses()`;
}

/** The one firewall a node's next declaration carries, parsed as its host parses it. */
export async function firewallOf(mesh: Mesh, node: string): Promise<FirewallResource> {
  const plan = JSON.parse(await cli(mesh, 'plan', node, '--json')) as { resources: unknown[] };
  const fw = parseResources(plan.resources).filter((r) => r.kind === 'firewall');
  assert.is(fw.length, 1, `${node} has one firewall`);
  return fw[0] as FirewallResource;
}

/** A firewall's openings of one port. */
export const rule = (fw: FirewallResource, port: number) => fw.rules.filter((r) => r.port === port);

/** A node's overlay address as a firewall source names it. */
export const address = async (mesh: Mesh, node: string) =>
  `${(await mesh.store.admin`select host(address) as a from overlay.address where node = ${node}`)[0]!.a}/32`;
