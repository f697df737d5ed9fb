// A node's words reach `mesh log`, serve's journal and the console; none of
// them may carry a terminal escape, a forged line or a reordering character.
// They are made plain once, where a report enters serve (src/sys/text.ts).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readReport, writeReport, type Report } from '../../src/wire/report.js';
import { WireError } from '../../src/wire/envelope.js';

const T = suite("a node's text is plain once it is read");

const ESC = '\u001b[2J\u001b[31m';
const FORGED = '\n2026-01-01T00:00:00Z mesh serve: signing key replaced';
const BIDI = '\u202e';
const raw = (s: string) => /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/.test(s);

T('every string of a report is read without control or reordering characters, and still says what it said', () => {
  const hostile: Report = {
    v: 1,
    serial: 3,
    held: [
      { id: `file:/srv/a${ESC}`, kind: 'file', target: `/srv/a${FORGED}`, origin: 'declared', digest: `d${BIDI}` },
    ],
    failed: [{ id: `file:/srv/b${BIDI}`, error: `cannot write${FORGED}` }],
    corrected: [`file:/srv/c${ESC}`],
    superseded: [],
    refused: { fault: 'forged', reason: `not signed${ESC}${FORGED}` },
  };
  const r = readReport(writeReport(hostile));
  const strings = [
    ...r.held.flatMap((h) => [h.id, h.kind, h.target, h.digest]),
    ...r.failed.flatMap((f) => [f.id, f.error]),
    ...r.corrected,
    r.refused!.reason,
  ];
  assert.equal(strings.filter(raw), [], 'no raw control character is left');
  assert.is(
    r.refused!.reason,
    'not signed\\u001b[2J\\u001b[31m\\u000a2026-01-01T00:00:00Z mesh serve: signing key replaced',
  );
  assert.is(r.held[0]!.target, '/srv/a\\u000a2026-01-01T00:00:00Z mesh serve: signing key replaced');
  assert.is(r.failed[0]!.id, 'file:/srv/b\\u202e');
  assert.is(r.corrected[0], 'file:/srv/c\\u001b[2J\\u001b[31m');
  assert.is(r.held[0]!.kind, 'file', 'plain text is left alone');
});

T('a report that is not JSON is refused with a message that quotes none of its raw bytes', () => {
  let said = '';
  try {
    readReport(Buffer.from(`${ESC}not json${FORGED}`)); // the parser quotes text it cannot read
  } catch (e) {
    assert.instance(e, WireError);
    said = (e as Error).message;
  }
  assert.match(said, /report is not JSON/);
  assert.not.ok(raw(said), said);
});

T.run();
