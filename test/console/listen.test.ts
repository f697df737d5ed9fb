// Where the console listens: loopback unless the operator names an address,
// and an address is an IP and a port, never a name that may resolve anywhere.
import { test } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { parseListen, consoleUrl, DEFAULT_LISTEN } from '../../src/console/listen.js';

test('by default the console listens on loopback only, port 7780', () => {
  assert.equal(parseListen(), { host: '127.0.0.1', port: 7780 });
  assert.is(DEFAULT_LISTEN, '127.0.0.1:7780');
});

test('an address the operator names is taken as given: IPv4, IPv6 in brackets', () => {
  assert.equal(parseListen('10.99.0.1:7780'), { host: '10.99.0.1', port: 7780 });
  assert.equal(parseListen('[::1]:7781'), { host: '::1', port: 7781 });
  assert.is(consoleUrl(parseListen('[::1]:7781')), 'http://[::1]:7781');
  assert.is(consoleUrl(parseListen('127.0.0.1:7780'), true), 'https://127.0.0.1:7780');
});

test('a host name, a missing or impossible port, or no address at all is refused with the form to use', () => {
  for (const bad of [
    'localhost:7780',
    'console.example:7780',
    '127.0.0.1',
    ':7780',
    '7780',
    '127.0.0.1:70000',
    '999.1.1.1:7780',
    '::1:7780',
    '',
  ]) {
    assert.throws(
      () => parseListen(bad),
      /is not ADDRESS:PORT: give an IP address and a port.* \(MSHF1\)\.$/,
      JSON.stringify(bad),
    );
  }
});

test.run();
