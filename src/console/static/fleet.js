// The fleet page: one page of the fleet at a time, read from the server
// (/api/fleet: inventory.fleet_page, in name order, filtered in SQL by name
// prefix, site and state), so the browser draws a hundred rows whether the
// fleet holds a hundred nodes or a hundred thousand. Next and previous move
// by the last name shown (keyset), and the page is read again whenever the
// server says the fleet changed (/api/fleet/changes), with no reload.
'use strict';

const COLUMNS = [
  ['name', 'node'], ['site', 'site'], ['state', 'state'], ['stale', 'stale'], ['declared', 'declared'], ['applied', 'applied'],
  ['failing', 'failing'], ['holds', 'holds'], ['report_age', 'report'], ['agent', 'agent'],
];
/** What the page asks for: its filter, where this page starts, and the starts of the pages before it. */
const view = { prefix: '', site: '', state: 'all', after: null, trail: [] };
/** Each read is numbered: an answer to an older read, arriving late, is dropped. */
let asked = 0, loading = false, again = false, first = true;
let tbody, counter, error, prev, next, nextAfter = null;

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
  return el('tr', { 'data-node': row.name, 'data-state': stateClass(row.state), 'data-stale': row.stale ? 'stale' : null }, COLUMNS.map(([k]) => cell(row, k)));
}

function query() {
  const q = new URLSearchParams();
  if (view.prefix) q.set('prefix', view.prefix);
  if (view.site) q.set('site', view.site);
  if (view.state !== 'all') q.set('state', view.state);
  if (view.after) q.set('after', view.after);
  return q.toString();
}

function render(page) {
  tbody.replaceChildren(...page.rows.map(rowElement));
  const c = page.counts;
  counter.textContent = `${c.nodes} nodes: ${c.here} here, ${c.wedged} wedged, ${c.away} out of touch, ${c.never} never spoken, ${c.stale} stale; `
    + `${c.matching} match, ${page.rows.length} shown on page ${view.trail.length + 1}`;
  nextAfter = page.next;
  next.disabled = page.next === null;
  prev.disabled = view.trail.length === 0;
  error.textContent = '';
  if (first) { first = false; ready(); }
}

/** Read the page the view asks for; a read asked for while one runs is made once it ends. */
async function load() {
  if (loading) { again = true; return; }
  loading = true;
  try {
    do {
      again = false;
      const n = ++asked;
      try {
        const page = await getJSON(`/api/fleet?${query()}`);
        if (n === asked) render(page);
      } catch (err) {
        // A filter the server refuses says why, in its own words; the rows shown stay until a good one.
        error.textContent = err.message;
        if (first) { first = false; ready(); }
      }
    } while (again);
  } finally {
    loading = false;
  }
}

/** A new filter starts at the first page. */
function refilter() {
  view.after = null;
  view.trail = [];
  load();
}

let typing;
function typed(f) {
  clearTimeout(typing);
  typing = setTimeout(f, 150);
}

document.addEventListener('DOMContentLoaded', () => {
  const main = document.getElementById('main');
  const filter = el('input', { type: 'search', id: 'filter', placeholder: 'name starts with', 'aria-label': 'name starts with', autocomplete: 'off' });
  const site = el('input', { type: 'search', id: 'site', placeholder: 'site', 'aria-label': 'site', autocomplete: 'off' });
  const state = el('select', { id: 'state', 'aria-label': 'state' },
    el('option', { value: 'all' }, 'every state'), el('option', { value: 'here' }, 'here'),
    el('option', { value: 'wedged' }, 'wedged'),
    el('option', { value: 'away' }, 'out of touch'), el('option', { value: 'never' }, 'never spoken'), el('option', { value: 'stale' }, 'stale'));
  prev = el('button', { type: 'button', id: 'prev', disabled: true }, 'previous');
  next = el('button', { type: 'button', id: 'next', disabled: true }, 'next');
  counter = el('p', { id: 'count', class: 'count' }, 'loading');
  error = el('p', { id: 'error', class: 'error', role: 'status' });
  const head = el('tr', {}, COLUMNS.map(([k, label]) => el('th', { 'data-col': k }, label)));
  tbody = el('tbody', { id: 'nodes' });
  main.append(el('div', { class: 'tools' }, filter, site, state, prev, next), counter, error, el('table', { id: 'fleet' }, el('thead', {}, head), tbody));
  // Both boxes are read when typing pauses: a change to one is never lost to the other's pause.
  const typedIn = () => typed(() => { view.prefix = filter.value.trim().toLowerCase(); view.site = site.value.trim(); refilter(); });
  filter.addEventListener('input', typedIn);
  site.addEventListener('input', typedIn);
  state.addEventListener('change', () => { view.state = state.value; refilter(); });
  next.addEventListener('click', () => {
    if (nextAfter === null) return;
    view.trail.push(view.after);
    view.after = nextAfter;
    load();
  });
  prev.addEventListener('click', () => {
    if (!view.trail.length) return;
    view.after = view.trail.pop();
    load();
  });
  load();
  // The server says when any row changed; the page reads its own rows again.
  const es = new EventSource('/api/fleet/changes');
  let lost = false;
  // Back after a break: what changed meanwhile was not said, so the page is read again.
  es.addEventListener('open', () => { setLive('live', true); if (lost) load(); lost = false; });
  es.addEventListener('change', () => load());
  es.addEventListener('expired', () => { es.close(); setLive('signed out', false); location.reload(); });
  es.onerror = () => { lost = true; setLive('reconnecting', false); };
});
