// A fleet composed in parts (src/assignment/compose_parts.ts) is split into
// contiguous ranges of the sorted names, as long as each other by weight: a
// hub or dialable node with a long peer list weighs more than a node, so
// the range that holds it holds fewer nodes and the parts end together.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { splitByWeight, NODES_A_PEER } from '../../src/assignment/compose_parts.js';

const S = suite('composing in parts, split by weight');
const names = (n: number) => Array.from({ length: n }, (_, i) => `n${String(i).padStart(4, '0')}`);

S('every name once, in order, in at most the parts asked for, none empty', () => {
  for (const [n, parts] of [
    [1, 2],
    [5, 2],
    [6, 3],
    [1000, 2],
    [7, 7],
  ]) {
    const shares = splitByWeight(names(n!), new Map([['n0000', 50]]), parts!);
    assert.ok(shares.length <= parts! && shares.length >= 1, `${n} in ${parts}: ${shares.length} parts`);
    assert.ok(
      shares.every((s) => s.length > 0),
      'no part is empty',
    );
    assert.equal(shares.flat(), names(n!), `${n} in ${parts}: every name once, in order`);
  }
});

S('with nothing listed, the ranges are as long as each other', () => {
  assert.equal(
    splitByWeight(names(1000), new Map(), 2).map((s) => s.length),
    [500, 500],
  );
});

S('a node with a long peer list weighs its peers: its range holds fewer nodes', () => {
  // Two hubs of 5,000 peers each at the front of 10,000 nodes: 1,000 nodes' worth of extra weight.
  const hubs = new Map([
    ['n0000', 5000],
    ['n0001', 5000],
  ]);
  const [first, second] = splitByWeight(names(10_000), hubs, 2).map((s) => s.length);
  const extra = 2 * 5000 * NODES_A_PEER;
  // Each range is half the total weight, within the last node that crossed the line.
  assert.ok(Math.abs(first! + extra - (10_000 + extra) / 2) <= 1 + 5000 * NODES_A_PEER, `first ${first}`);
  assert.is(first! + second!, 10_000);
  assert.ok(first! < second!, `the hubs' range is the shorter: ${first} against ${second}`);
});

S.run();
