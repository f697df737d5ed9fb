// The host asks `ip route show match` only for an allowed IP no route of its
// interface contains (host/apply/wireguard/driver.ts syncRoutes): the
// containment it answers for itself must be what the kernel's match says.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { covers } from '../../host/apply/wireguard/wgconf.js';

const C = suite('a route contains an allowed IP');

C('a range contains its addresses and its smaller blocks, itself, and nothing wider or beside it', () => {
  for (const [outer, inner] of [
    ['10.64.0.0/12', '10.64.0.5/32'],
    ['10.64.0.0/12', '10.79.255.255/32'],
    ['10.64.0.0/12', '10.64.16.0/20'],
    ['10.64.0.0/12', '10.64.0.0/12'],
    ['0.0.0.0/0', '192.0.2.1/32'],
    ['10.64.0.9/32', '10.64.0.9/32'],
  ])
    assert.ok(covers(outer!, inner!), `${outer} contains ${inner}`);
  for (const [outer, inner] of [
    ['10.64.0.0/12', '10.80.0.0/32'],
    ['10.64.0.0/12', '10.63.255.255/32'],
    ['10.64.16.0/20', '10.64.0.0/12'],
    ['10.64.0.0/20', '10.64.0.0/12'],
    ['10.64.0.9/32', '10.64.0.8/32'],
    ['172.31.77.0/24', '172.31.78.1/32'],
    ['fd00::/8', 'fd00::1/128'],
    ['10.64.0.0/33', '10.64.0.0/33'],
  ])
    assert.not.ok(covers(outer!, inner!), `${outer} does not contain ${inner}`);
});

C.run();
