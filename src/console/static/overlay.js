// The overlay drawn (O1): the graph `mesh overlay show` prints, as SVG. Sites
// are groups on a circle, a site's nodes on a smaller circle inside it, hubs
// first; one line a peered pair. A dashed line is kept open by keepalives
// from behind NAT; a thick one carries a spoke's whole range to its hub. A
// node out of touch is drawn faded, and follows the fleet live. Below it,
// the two questions the graph answers (Q2): what a hub's failure would lose
// (`mesh overlay what-if`) and why one node cannot reach another (`mesh
// overlay why`), asked of the same SQL the commands read.
'use strict';

const NODE_R = 14;

function layout(nodes) {
  const sites = [...new Set(nodes.map((n) => n.site))].sort();
  const members = sites.map((s) => nodes.filter((n) => n.site === s).sort((a, b) => (b.hub - a.hub) || (a.name < b.name ? -1 : 1)));
  const radius = members.map((m) => Math.max(70, (m.length * 56) / (2 * Math.PI) + 50));
  const around = sites.length === 1 ? 0 : Math.max(...radius) * 1.2 + radius.reduce((a, b) => a + b, 0) / Math.PI;
  const at = new Map();
  const groups = sites.map((site, i) => {
    const a = (2 * Math.PI * i) / sites.length - Math.PI / 2;
    const cx = around * Math.cos(a), cy = around * Math.sin(a);
    const inner = radius[i] - 50;
    members[i].forEach((n, j) => {
      const b = (2 * Math.PI * j) / members[i].length - Math.PI / 2;
      // Labels sit outside the site's ring of nodes, away from the lines inside it.
      at.set(n.name, members[i].length === 1 ? { x: cx, y: cy, lx: 0, ly: 1 } : { x: cx + inner * Math.cos(b), y: cy + inner * Math.sin(b), lx: Math.cos(b), ly: Math.sin(b) });
    });
    return { site, cx, cy, r: radius[i] };
  });
  return { groups, at };
}

function pairs(nodes) {
  const out = new Map();
  for (const n of nodes) {
    for (const p of n.peers) {
      const [a, b] = n.name < p.peer ? [n.name, p.peer] : [p.peer, n.name];
      const key = `${a}\u0000${b}`;
      const e = out.get(key) || { a, b, endpoints: [], keepalive: null, route: null };
      if (p.endpoint) e.endpoints.push(`${p.peer} at ${p.endpoint}`);
      if (p.keepalive) e.keepalive = p.keepalive;
      if (p.route) e.route = `${n.name} routes the range through hub ${p.peer}`;
      out.set(key, e);
    }
  }
  return [...out.values()].sort((x, y) => (x.a + x.b < y.a + y.b ? -1 : 1));
}

function draw(g, states) {
  const { groups, at } = layout(g.nodes);
  const edges = pairs(g.nodes);
  const xs = [...at.values()].map((p) => p.x).concat(groups.flatMap((s) => [s.cx - s.r, s.cx + s.r]));
  const ys = [...at.values()].map((p) => p.y).concat(groups.flatMap((s) => [s.cy - s.r - 20, s.cy + s.r]));
  const pad = 30;
  const minX = Math.min(0, ...xs) - pad, minY = Math.min(0, ...ys) - pad;
  const w = Math.max(...xs, 0) - minX + pad, h = Math.max(...ys, 0) - minY + pad;
  const svg = el('svg:svg', { id: 'graph', viewBox: `${minX} ${minY} ${w} ${h}`, role: 'img', 'aria-label': 'overlay graph' });
  for (const s of groups) {
    svg.append(el('svg:g', { class: 'site', 'data-site': s.site },
      el('svg:circle', { cx: s.cx, cy: s.cy, r: s.r }),
      el('svg:text', { x: s.cx, y: s.cy - s.r - 6, 'text-anchor': 'middle' }, `site ${s.site}`)));
  }
  for (const e of edges) {
    const p = at.get(e.a), q = at.get(e.b);
    const cls = ['edge', e.keepalive ? 'kept' : '', e.route ? 'route' : ''].filter(Boolean).join(' ');
    const title = [`${e.a} - ${e.b}`, ...e.endpoints, e.keepalive ? `keepalive ${e.keepalive} s` : 'no keepalive', e.route || ''].filter(Boolean).join('; ');
    svg.append(el('svg:line', { class: cls, x1: p.x, y1: p.y, x2: q.x, y2: q.y, 'data-pair': `${e.a} ${e.b}` }, el('svg:title', {}, title)));
  }
  for (const n of g.nodes) {
    const p = at.get(n.name);
    svg.append(el('svg:g', { class: `node ${n.hub ? 'hub' : ''} ${stateClass(states[n.name] || 'never spoken')}`, 'data-node': n.name },
      el('svg:circle', { cx: p.x, cy: p.y, r: n.hub ? NODE_R + 4 : NODE_R }),
      el('svg:text', { x: p.x + p.lx * (NODE_R + 8), y: p.y + p.ly * (NODE_R + 8) + 4 + (p.ly > 0.3 ? 8 : 0), 'text-anchor': p.lx > 0.3 ? 'start' : p.lx < -0.3 ? 'end' : 'middle' }, n.name),
      el('svg:title', {}, `${n.name} ${n.address}${n.hub ? ' (hub)' : ''}${n.dialable ? ` dialable at ${n.dialable}` : ' behind NAT'}: ${states[n.name] || 'never spoken'}`)));
  }
  return { svg, edges };
}

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  try {
    const g = await getJSON('/api/overlay');
    const { svg, edges } = draw(g, g.states);
    const hubs = g.nodes.filter((n) => n.hub).map((n) => n.name);
    main.append(
      el('p', { class: 'count' }, `overlay ${g.network} on ${g.interface}: ${g.nodes.length} nodes, ${edges.length} peered pairs, hubs: ${hubs.length ? hubs.join(', ') : 'none'}`),
      el('p', { class: 'legend' }, 'thick ring: hub; dashed: kept open by keepalives from behind NAT; thick: a spoke\'s route to its hub (pairs that are not peered reach each other through it); faded: out of touch'),
      el('div', { class: 'graph' }, svg),
      el('h2', {}, 'peered pairs'),
      edges.length ? el('table', { id: 'pairs' },
        el('thead', {}, el('tr', {}, ['pair', 'endpoint', 'keepalive', 'through hub'].map((x) => el('th', {}, x)))),
        el('tbody', {}, edges.map((e) => el('tr', {},
          el('td', {}, `${e.a} - ${e.b}`), el('td', {}, e.endpoints.join('; ') || '-'),
          el('td', {}, e.keepalive ? `${e.keepalive} s` : '-'), el('td', {}, e.route || '-')))))
        : el('p', { class: 'empty' }, 'no peered pair: a pair needs a hub or a dialable node at one site'));
    main.append(...questions(g));
    fleetStream((rows) => {
      for (const n of svg.querySelectorAll('g.node')) {
        const r = rows.get(n.dataset.node);
        const hub = n.classList.contains('hub');
        n.setAttribute('class', `node ${hub ? 'hub' : ''} ${stateClass(r ? r.state : 'never spoken')}`);
      }
    });
    ready();
  } catch (err) { failed(err); }
});

/** The what-if and why forms, each answering in place from its endpoint. */
function questions(g) {
  const names = g.nodes.map((n) => n.name);
  const pick = (name, list) => el('select', { name }, list.map((n) => el('option', { value: n }, n)));
  const cell = (v) => el('td', {}, v === null || v === undefined ? '-' : String(v));
  const rows = (cols, data) => data.length
    ? el('table', {}, el('thead', {}, el('tr', {}, cols.map(([h]) => el('th', {}, h)))),
      el('tbody', {}, data.map((r) => el('tr', {}, cols.map(([, f]) => cell(f(r)))))))
    : el('p', { class: 'empty' }, 'none');

  const wiOut = el('div', { id: 'what-if-answer' });
  const down = pick('down', g.nodes.filter((n) => n.hub).map((n) => n.name).concat(g.nodes.filter((n) => !n.hub).map((n) => n.name)));
  const wiForm = el('form', { id: 'what-if' }, 'if ', down, ' fails ', el('button', { type: 'submit' }, 'what is lost?'));
  wiForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    wiOut.replaceChildren(el('p', {}, 'asking...'));
    try {
      const w = await getJSON(`/api/overlay/what-if?down=${encodeURIComponent(down.value)}`);
      const carrier = (c) => c || 'none';
      wiOut.replaceChildren(
        el('p', { class: 'count' }, `${w.stranded.length} spoke(s) stranded, ${w.pairsTotal} pair(s) lose every path, ${w.openings.length} opening(s) become unreachable; ` +
          (w.carried ? 'another hub would carry them once the graph is computed again' : 'no other hub would carry some of them')),
        el('h3', {}, 'stranded spokes'),
        rows([['spoke', (r) => r.node], ['site', (r) => r.site], ['hub lost', (r) => r.hub], ['carried by', (r) => carrier(r.carriedBy)], ['stops reaching', (r) => r.lost]], w.stranded),
        el('h3', {}, w.pairs.length < w.pairsTotal ? `pairs that lose every path (the first ${w.pairs.length})` : 'pairs that lose every path'),
        rows([['from', (r) => r.node], ['to', (r) => r.peer], ['hub lost', (r) => r.hub], ['carried by', (r) => carrier(r.carriedBy)]], w.pairs),
        el('h3', {}, 'openings that become unreachable'),
        rows([['node', (r) => r.node], ['port', (r) => `${r.proto} ${r.port}${r.portTo ? '-' + r.portTo : ''}`], ['from', (r) => r.fromNode], ['why', (r) => r.why], ['lost', (r) => r.lostHub || `${r.node} is down`], ['carried by', (r) => carrier(r.carriedBy)]], w.openings));
    } catch (err) { wiOut.replaceChildren(el('p', { class: 'error' }, err.message)); }
  });

  const whyOut = el('div', { id: 'why-answer' });
  const from = pick('from', names), to = pick('to', names);
  if (names.length > 1) to.value = names[1];
  const port = el('input', { name: 'port', type: 'number', min: 1, max: 65535, placeholder: 'port (optional)' });
  const whyForm = el('form', { id: 'why' }, 'why can ', from, ' not reach ', to, ' on ', port, ' ', el('button', { type: 'submit' }, 'why?'));
  whyForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    whyOut.replaceChildren(el('p', {}, 'asking...'));
    try {
      const q = `from=${encodeURIComponent(from.value)}&to=${encodeURIComponent(to.value)}${port.value ? `&port=${encodeURIComponent(port.value)}` : ''}`;
      const w = await getJSON(`/api/overlay/why?${q}`);
      whyOut.replaceChildren(el('p', { class: w.fact === 'path open' ? 'fact open' : 'fact' }, el('strong', {}, w.fact), `: ${w.detail}`),
        w.remedy ? el('p', {}, `remedy: ${w.remedy}`) : null);
    } catch (err) { whyOut.replaceChildren(el('p', { class: 'error' }, err.message)); }
  });

  return [el('h2', {}, 'what if a node fails'), wiForm, wiOut, el('h2', {}, 'why is there no path'), whyForm, whyOut];
}
