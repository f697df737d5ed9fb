// The audit history (C3): the rows `mesh log` prints, narrowed the same way
// (node, kind or family, since), newest last as a log reads. The filters live
// in the address, so a view can be linked; a filter the server refuses says
// why, in the sentence `mesh log` would print.
'use strict';

const FILTERS = ['node', 'kind', 'since'];
let tbody, counter, problem, kindSelect;

const when = (t) => new Date(t).toISOString().replace('T', ' ').slice(0, 19);

/** Kinds, and the families more than one kind shares (token: token-issued, token-spent), as --kind takes them. */
function kindOptions(kinds) {
  const prefixes = kinds.filter((k) => k.includes('-')).map((k) => k.split('-')[0]);
  const families = [...new Set(prefixes.filter((p, i) => prefixes.indexOf(p) !== i))];
  return [...families.map((f) => [f, `${f} (every ${f}-...)`]), ...kinds.map((k) => [k, k])].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function load() {
  const q = new URLSearchParams(location.search);
  problem.textContent = '';
  try {
    const d = await getJSON(`/api/history?${q}`);
    if (kindSelect.options.length === 1) {
      for (const [value, label] of kindOptions(d.kinds)) kindSelect.append(el('option', { value }, label));
      kindSelect.value = q.get('kind') || '';
    }
    tbody.replaceChildren(...d.rows.map((r) => el('tr', { 'data-seq': r.seq },
      el('td', { class: 'num' }, r.seq),
      el('td', {}, when(r.at)),
      el('td', {}, r.kind),
      el('td', {}, r.node ? nodeLink(r.node) : '-'),
      el('td', {}, r.actor),
      el('td', { class: 'mono what' }, r.what))));
    counter.textContent = `${d.rows.length} row${d.rows.length === 1 ? '' : 's'}, oldest first${d.rows.length === 100 ? ' (the newest 100 that match)' : ''}`;
  } catch (err) {
    tbody.replaceChildren();
    counter.textContent = '';
    problem.textContent = err.message;
  }
  // Each load counted, so a reader (a test) knows the rows are those of the filters now in the address.
  document.body.dataset.loads = String(Number(document.body.dataset.loads || 0) + 1);
}

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  const q = new URLSearchParams(location.search);
  const node = el('input', { type: 'search', id: 'node', placeholder: 'node', 'aria-label': 'node', value: q.get('node') || '' });
  kindSelect = el('select', { id: 'kind', 'aria-label': 'kind' }, el('option', { value: '' }, 'every kind'));
  const since = el('input', { type: 'search', id: 'since', placeholder: 'since: 30m, 24h, 7d', 'aria-label': 'since', value: q.get('since') || '' });
  counter = el('p', { id: 'count', class: 'count' }, 'loading');
  problem = el('p', { id: 'problem', class: 'error' });
  tbody = el('tbody', { id: 'rows' });
  main.append(el('div', { class: 'tools' }, node, kindSelect, since), counter, problem,
    el('table', { id: 'history' }, el('thead', {}, el('tr', {}, ['seq', 'at', 'kind', 'node', 'who', 'what'].map((h) => el('th', {}, h)))), tbody));
  const inputs = { node, kind: kindSelect, since };
  // A filter is applied when it is complete (change: enter or leaving the field), not at each key.
  for (const k of FILTERS) {
    inputs[k].addEventListener('change', () => {
      const next = new URLSearchParams(location.search);
      const v = inputs[k].value.trim();
      if (v) next.set(k, v); else next.delete(k);
      history.replaceState(null, '', `/history${next.size ? `?${next}` : ''}`);
      load();
    });
  }
  await load();
  setLive('', true);
  ready();
});
