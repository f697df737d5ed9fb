// E5: one definition of the enrolment request, written as the host writes it
// and read as the control plane reads it; a secret sealed to the key that
// arrived opens with the private half the host kept.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { writeEnrolRequest, readEnrolRequest } from '../../src/wire/enrol.js';
import { nodeKeys, b64 } from '../../src/crypto/keys.js';
import { seal, open } from '../../src/crypto/seal.js';
import { signEnvelope, WireError } from '../../src/wire/envelope.js';

const E5 = suite('E5 the enrolment request across the join');

function roundTrip(bytes: Buffer, hostSealingSecret: Uint8Array): void {
  const req = readEnrolRequest(bytes);
  const secret = randomBytes(32);
  const blob = seal(secret, req.sealing);
  assert.equal(Buffer.from(open(blob, hostSealingSecret)), secret);
}

E5('a real request is read and a secret sealed to its key opens with the key the host kept', () => {
  const keys = nodeKeys();
  const password = randomBytes(32).toString('base64url');
  const bytes = writeEnrolRequest('web1', 'sekrit', password, keys);
  const req = readEnrolRequest(bytes);
  assert.is(req.name, 'web1');
  assert.is(req.secret, 'sekrit');
  assert.is(req.password, password, 'the password the host chose is the one serve sets');
  assert.equal(b64(req.identity), b64(keys.identity.public));
  assert.equal(b64(req.overlay), b64(keys.overlay.public));
  roundTrip(bytes, keys.sealing.secret);
});

function forge(keys: ReturnType<typeof nodeKeys>, edit: (body: Record<string, any>) => void): Buffer {
  const body: Record<string, any> = {
    v: 2,
    name: 'web1',
    secret: 's',
    password: randomBytes(32).toString('base64url'),
    keys: { identity: b64(keys.identity.public), overlay: b64(keys.overlay.public), sealing: b64(keys.sealing.public) },
  };
  edit(body);
  return signEnvelope(body, keys.identity.secret);
}

E5('a renamed field fails', () => {
  const keys = nodeKeys();
  const bytes = forge(keys, (b) => {
    b.keys.seal = b.keys.sealing;
    delete b.keys.sealing;
  });
  assert.throws(
    () => roundTrip(bytes, keys.sealing.secret),
    (e: unknown) => e instanceof WireError && /keys\.sealing/.test((e as Error).message),
  );
});

E5('a value that is not a key fails', () => {
  const keys = nodeKeys();
  const bytes = forge(keys, (b) => {
    b.keys.sealing = 'not-a-key';
  });
  assert.throws(
    () => roundTrip(bytes, keys.sealing.secret),
    (e: unknown) => e instanceof WireError && /not a key/.test((e as Error).message),
  );
});

E5("a key that is somebody else's fails only at the sealing step", () => {
  const keys = nodeKeys();
  const other = nodeKeys();
  const bytes = forge(keys, (b) => {
    b.keys.sealing = b64(other.sealing.public);
  });
  readEnrolRequest(bytes); // the shape is right
  assert.throws(() => roundTrip(bytes, keys.sealing.secret), /not sealed to this key/);
});

E5('a request not signed by the identity key it presents is forged', () => {
  const keys = nodeKeys();
  const other = nodeKeys();
  const body = {
    v: 2,
    name: 'web1',
    secret: 's',
    password: randomBytes(32).toString('base64url'),
    keys: { identity: b64(keys.identity.public), overlay: b64(keys.overlay.public), sealing: b64(keys.sealing.public) },
  };
  assert.throws(
    () => readEnrolRequest(signEnvelope(body, other.identity.secret)),
    (e: unknown) => e instanceof WireError && (e as WireError).fault === 'forged',
  );
});

E5('a request with no password, or a weak one, is malformed, each said; one from before v:2 too', () => {
  const keys = nodeKeys();
  const refused = (edit: (b: Record<string, any>) => void, said: RegExp) =>
    assert.throws(
      () => readEnrolRequest(forge(keys, edit)),
      (e: unknown) =>
        e instanceof WireError && (e as WireError).fault === 'malformed' && said.test((e as Error).message),
    );
  refused((b) => {
    delete b.password;
  }, /carries no broker password/);
  refused((b) => {
    b.password = 'hunter2';
  }, /weak broker password/);
  refused((b) => {
    b.password = 'a'.repeat(42);
  }, /weak broker password/);
  refused((b) => {
    b.password = '+'.repeat(43);
  }, /weak broker password/);
  refused((b) => {
    b.v = 1;
  }, /lacks \{v:2/);
  assert.is(
    readEnrolRequest(
      forge(keys, (b) => {
        b.password = 'a'.repeat(43);
      }),
    ).password,
    'a'.repeat(43),
  );
});

E5(
  'a weak broker password is refused with its own code, MSHN6: too short, or not base64url; its length alone is judged, not how random it looks',
  () => {
    const keys = nodeKeys();
    const code = (password: string) => {
      try {
        readEnrolRequest(
          forge(keys, (b) => {
            b.password = password;
          }),
        );
      } catch (e) {
        return e instanceof WireError ? `${e.fault} ${e.code}` : String(e);
      }
      return 'taken';
    };
    assert.is(code('hunter2'), 'malformed MSHN6', 'a short password');
    assert.is(
      code(randomBytes(31).toString('base64url').slice(0, 42)),
      'malformed MSHN6',
      '42 characters: one short of 32 random bytes',
    );
    assert.is(code('+'.repeat(43)), 'malformed MSHN6', 'not base64url');
    assert.is(code('a'.repeat(201)), 'malformed MSHN6', 'longer than 200');
    // A password that does not look random is not refused: the rule is the host's 32 random bytes, checked by their length.
    assert.is(code('a'.repeat(43)), 'taken');
    assert.is(code(randomBytes(32).toString('base64url')), 'taken');
  },
);

E5.run();
