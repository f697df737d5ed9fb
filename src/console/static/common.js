// Shared by every page. The DOM is built with textContent and attributes
// only, never innerHTML: a name or an error text that holds markup shows as
// the characters it is (and the page's CSP would stop a script anyway).
'use strict';

/** el('td', {class: 'x'}, 'text', childNode, ...): a new element; strings become text nodes. */
function el(tag, attrs, ...children) {
  const e = tag.startsWith('svg:') ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined && v !== false) e.setAttribute(k, String(v));
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

/** GET a JSON endpoint; a lapsed session brings the sign-in page back. */
async function getJSON(path) {
  const r = await fetch(path, { credentials: 'same-origin' });
  if (r.status === 401) { location.reload(); throw new Error('signed out'); }
  if (!r.ok) {
    // The server says why in one sentence (a filter it refuses, a store it cannot read).
    const said = await r.json().catch(() => null);
    throw new Error(said && said.error ? said.error : `${path}: ${r.status}`);
  }
  return r.json();
}

function setLive(text, ok) {
  const live = document.getElementById('live');
  live.textContent = text;
  live.className = ok ? 'live ok' : 'live';
}

/** The fleet as the server pushes it (server-sent events): a snapshot, then the rows that changed. */
function fleetStream(onRows) {
  const rows = new Map();
  const es = new EventSource('/api/fleet/events');
  es.addEventListener('snapshot', (m) => {
    rows.clear();
    for (const r of JSON.parse(m.data).rows) rows.set(r.name, r);
    setLive('live', true);
    onRows(rows, null);
  });
  es.addEventListener('change', (m) => {
    const d = JSON.parse(m.data);
    for (const n of d.gone) rows.delete(n);
    for (const r of d.rows) rows.set(r.name, r);
    onRows(rows, d);
  });
  // The session ended: the stream is closed by the server, and a reload shows the sign-in page.
  es.addEventListener('expired', () => { es.close(); setLive('signed out', false); location.reload(); });
  es.onerror = () => setLive('reconnecting', false);
  return es;
}

function stateClass(state) {
  if (state === 'here') return 'here';
  // Here, but not applying what it was sent: its link lives, its apply loop does not.
  if (state === 'wedged') return 'wedged';
  if (state === 'never spoken') return 'never';
  return 'away';
}

function nodeLink(name) {
  return el('a', { href: `/node?name=${encodeURIComponent(name)}` }, name);
}

function ready() {
  document.body.dataset.ready = String(Math.round(performance.now()));
}

function failed(err) {
  const main = document.getElementById('main');
  main.append(el('p', { class: 'error' }, `could not load: ${err.message}`));
}

document.addEventListener('DOMContentLoaded', () => {
  const page = document.body.dataset.page;
  // Signing out is a POST: the server closes the session, not just this browser's cookie.
  const header = document.querySelector('header');
  if (header && page !== 'signin')
    header.append(el('form', { id: 'signout', method: 'post', action: '/signout' }, el('button', { type: 'submit' }, 'sign out')));
  for (const a of document.querySelectorAll('nav a')) if (a.dataset.nav === page) a.className = 'current';
});
