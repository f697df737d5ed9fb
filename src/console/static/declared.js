// What a node was declared at a time, and what changed between two times
// (read-only), from the declarations mesh keeps: the answers of `mesh node
// show NODE --at TIME` and `mesh diff [NODE] --from FROM --to TO`
// (assignment.declared_at, assignment.declared_changes). The question lives
// in the address (?node&at, ?node&from&to), so an answer can be linked; a
// time or node the server refuses says why, in the sentence the CLI prints.
'use strict';

const iso = (t) => new Date(t).toISOString();
const plural = (n, one) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

function rows(id, cols, data, empty) {
  if (!data.length) return el('p', { id, class: 'empty' }, empty);
  return el('table', { id },
    el('thead', {}, el('tr', {}, cols.map(([h]) => el('th', {}, h)))),
    el('tbody', {}, data.map((r) => el('tr', {}, cols.map(([h, f]) => el('td', { class: `c-${h}` }, String(f(r))))))));
}

/** The lines `mesh node show NODE --at TIME` prints. */
function atAnswer(n) {
  const d = n.declared, a = n.applied;
  return [
    el('p', { id: 'at-headline' }, d
      ? `${n.node} at ${iso(n.at)}: declaration ${d.serial} (issued ${iso(d.issuedAt)}), ${d.resources.length} resources`
      : `${n.node} at ${iso(n.at)}: not declared yet`),
    d ? rows('at-resources', [['id', (r) => r.id], ['kind', (r) => r.kind]], d.resources, 'no resources') : null,
    el('p', { id: 'at-applied' }, a
      ? a.serial === (d && d.serial)
        ? `reported applied: the same declaration (at ${iso(a.at)})`
        : `reported applied: declaration ${a.serial} (at ${iso(a.at)}), ${a.resources.length} resources`
      : 'reported applied: nothing yet'),
  ].filter(Boolean);
}

/** The lines `mesh diff` prints (one a group of nodes with the same changes), then each node's changes. */
function diffAnswer(x) {
  if (!x.groups.length)
    return [el('p', { id: 'diff-headline', class: 'empty' }, `nothing declared differently at ${iso(x.to)} than at ${iso(x.from)}`)];
  const each = x.nodes.flatMap((n) => n.changes.map((c) => ({ node: n.node, ...c })));
  return [
    el('p', { id: 'diff-headline', class: 'count' }, `from ${iso(x.from)} to ${iso(x.to)}: ${plural(x.nodes.length, 'node')} declared differently`),
    el('ul', { id: 'diff-groups' }, x.groups.map((g) => el('li', {},
      `${plural(g.nodes, 'node')}: ${g.changes.join(', ')} (${g.sample.join(', ')}${g.nodes > g.sample.length ? ', ...' : ''})`))),
    rows('diff-changes', [['node', (r) => r.node], ['id', (r) => r.id], ['change', (r) => r.change]], each.slice(0, 500), 'none'),
    each.length > 500 ? el('p', { class: 'count' }, `the first 500 of ${each.length} changes: mesh diff --json lists every one`) : null,
  ].filter(Boolean);
}

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  const q = new URLSearchParams(location.search);
  const input = (name, placeholder) => el('input', { name, placeholder, value: q.get(name) || '' });
  main.append(
    el('form', { id: 'at', method: 'get', action: '/declared' }, 'node ', input('node', 'web1'), ' at ', input('at', 'now, 2h, 2026-12-05 12:00'),
      ' ', el('button', { type: 'submit' }, 'what was declared?')),
    el('form', { id: 'diff', method: 'get', action: '/declared' }, 'node ', input('node', 'every node'), ' from ', input('from', '1d'),
      ' to ', input('to', 'now'), ' ', el('button', { type: 'submit' }, 'what changed?')));
  const out = el('div', { id: 'answer' });
  main.append(out);
  const node = q.get('node') || '';
  try {
    if (q.get('from')) {
      const p = new URLSearchParams({ node, from: q.get('from'), to: q.get('to') || 'now' });
      out.append(el('h2', {}, node ? `what changed on ${node}` : 'what changed across the fleet'), ...diffAnswer(await getJSON(`/api/declared/diff?${p}`)));
    } else if (node) {
      const p = new URLSearchParams({ node, at: q.get('at') || 'now' });
      out.append(el('h2', {}, `what ${node} was declared`), ...atAnswer(await getJSON(`/api/declared?${p}`)));
    } else out.append(el('p', { class: 'empty' }, 'name a node and a time, or two times'));
  } catch (err) { out.append(el('p', { id: 'problem', class: 'error' }, err.message)); }
  setLive('', true);
  ready();
});
