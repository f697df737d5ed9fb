// The fleet page: every node, live. Rows arrive over server-sent events
// (fleetStream); a render is coalesced to one a frame, and a row's element is
// rebuilt only when its data changed, so a fleet of 10,000 stays quick.
'use strict';

const COLUMNS = [
  ['name', 'node'], ['site', 'site'], ['state', 'state'], ['stale', 'stale'], ['declared', 'declared'], ['applied', 'applied'],
  ['failing', 'failing'], ['holds', 'holds'], ['report_age', 'report'], ['agent', 'agent'],
];
const view = { filter: '', state: 'all', sort: 'name', desc: false };
const cache = new Map(); // name -> { json, tr }
let rows = new Map();
let tbody, counter, pending = false, first = true;

function cell(row, key) {
  switch (key) {
    case 'name': return el('td', {}, nodeLink(row.name));
    case 'state': return el('td', { class: `state ${stateClass(row.state)}` }, row.state);
    // C2: the declaration it holds has expired (node_status.stale); when it held until, on hover.
    case 'stale': return el('td', { class: row.stale ? 'stale' : '', title: row.holds_until ? `holds until ${row.holds_until}` : null }, row.stale ? 'stale' : '-');
    case 'failing': return el('td', { class: row.failing.length ? 'failing' : '' }, row.failing.length ? row.failing.join(', ') : '-');
    case 'declared': return el('td', { class: 'num' }, row.declared ?? '-');
    case 'applied': {
      const behind = row.declared !== null && row.applied !== row.declared;
      return el('td', { class: behind ? 'num behind' : 'num' }, row.applied ?? '-');
    }
    case 'holds': return el('td', { class: 'num' }, row.holds ?? '-');
    // The mesh-host version its reports name; outdated (outside the skew rule or behind) is marked, its reason on hover.
    case 'agent': return el('td', { class: row.outdated ? 'agent outdated' : 'agent', title: row.outdated ? row.agent_why : null }, row.agent ?? '-');
    default: return el('td', {}, row[key] ?? '-');
  }
}

function rowElement(row) {
  const json = JSON.stringify(row);
  const c = cache.get(row.name);
  if (c && c.json === json) return c.tr;
  const tr = el('tr', { 'data-node': row.name, 'data-state': stateClass(row.state), 'data-stale': row.stale ? 'stale' : null }, COLUMNS.map(([k]) => cell(row, k)));
  cache.set(row.name, { json, tr });
  return tr;
}

function compare(a, b) {
  const k = view.sort;
  let x = a[k], y = b[k];
  if (k === 'failing') { x = a.failing.length; y = b.failing.length; }
  if (k === 'report_age' || k === 'state') { x = a.last_seen ?? ''; y = b.last_seen ?? ''; }
  let r = x === y ? 0 : x === null || x === undefined ? 1 : y === null || y === undefined ? -1 : x < y ? -1 : 1;
  if (r === 0) r = a.name < b.name ? -1 : 1;
  return view.desc ? -r : r;
}

/** The state select: here / wedged / out of touch / never spoken, or stale (which any of those may also be). */
function inState(r) {
  if (view.state === 'all') return true;
  if (view.state === 'stale') return r.stale;
  return stateClass(r.state) === view.state;
}

function render() {
  pending = false;
  const f = view.filter.toLowerCase();
  const shown = [...rows.values()].filter((r) => inState(r)
    && (!f || r.name.includes(f) || r.site.includes(f) || r.state.includes(f) || (r.stale && 'stale'.includes(f))
        || (r.agent ?? '').includes(f) || (r.outdated && 'outdated'.includes(f))
        || r.failing.some((x) => x.toLowerCase().includes(f))));
  shown.sort(compare);
  tbody.replaceChildren(...shown.map(rowElement));
  for (const n of cache.keys()) if (!rows.has(n)) cache.delete(n);
  const counts = { here: 0, wedged: 0, away: 0, never: 0, stale: 0 };
  for (const r of rows.values()) { counts[stateClass(r.state)]++; if (r.stale) counts.stale++; }
  counter.textContent = `${rows.size} nodes: ${counts.here} here, ${counts.wedged} wedged, ${counts.away} out of touch, ${counts.never} never spoken, ${counts.stale} stale; ${shown.length} shown`;
  if (first) { first = false; ready(); }
}

function later() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(render);
}

document.addEventListener('DOMContentLoaded', () => {
  const main = document.getElementById('main');
  const filter = el('input', { type: 'search', id: 'filter', placeholder: 'filter: name, site, state, stale, failing, agent, outdated', 'aria-label': 'filter' });
  const state = el('select', { id: 'state', 'aria-label': 'state' },
    el('option', { value: 'all' }, 'every state'), el('option', { value: 'here' }, 'here'),
    el('option', { value: 'wedged' }, 'wedged'),
    el('option', { value: 'away' }, 'out of touch'), el('option', { value: 'never' }, 'never spoken'), el('option', { value: 'stale' }, 'stale'));
  counter = el('p', { id: 'count', class: 'count' }, 'loading');
  const head = el('tr', {}, COLUMNS.map(([k, label]) => el('th', { 'data-sort': k, tabindex: 0 }, label)));
  tbody = el('tbody', { id: 'nodes' });
  main.append(el('div', { class: 'tools' }, filter, state), counter, el('table', { id: 'fleet' }, el('thead', {}, head), tbody));
  filter.addEventListener('input', () => { view.filter = filter.value.trim(); later(); });
  state.addEventListener('change', () => { view.state = state.value; later(); });
  head.addEventListener('click', (e) => {
    const k = e.target.closest('th')?.dataset.sort;
    if (!k) return;
    view.desc = view.sort === k ? !view.desc : false;
    view.sort = k;
    for (const th of head.children) th.className = th.dataset.sort === k ? (view.desc ? 'sorted desc' : 'sorted') : '';
    later();
  });
  fleetStream((r) => { rows = r; later(); });
});
