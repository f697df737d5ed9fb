// 054: the base ruleset, loaded before the store and the broker listen, in a
// table of mesh's own (`inet mesh`) that the filter module later replaces.
// Policy accept: the point is that the table exists, is ours, and is in
// place first -- not to lock out whoever is running the bundle over ssh.
import { runAny } from '../src/sys/proc.js';
import type { Ports } from './layout.js';

export const TABLE = 'inet mesh';
const NFT = '/usr/sbin/nft';

export function ruleset(ports: Ports): string {
  return [
    '#!/usr/sbin/nft -f',
    '# mesh base ruleset (written by the first-node bundle). The first two lines',
    '# make the table exist and then drop it, so loading this file replaces the',
    '# whole table in one transaction whether or not it was there.',
    'table inet mesh',
    'delete table inet mesh',
    'table inet mesh {',
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    '    ct state established,related accept',
    '    iif "lo" accept',
    `    tcp dport ${ports.amqps} accept comment "broker, TLS"`,
    `    udp dport ${ports.wg} accept comment "WireGuard"`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Load the file when it changed or the table is missing; true when anything was loaded. */
export async function loadRuleset(file: string, fileChanged: boolean): Promise<boolean> {
  const present = (await runAny(NFT, ['list', 'table', 'inet', 'mesh'])).code === 0;
  if (present && !fileChanged) return false;
  const r = await runAny(NFT, ['-f', file]);
  if (r.code !== 0) throw new Error(`nft -f ${file} failed: ${r.stderr.trim()}. Is nftables installed (bundle/ensure-packages.sh first)?`);
  return true;
}
