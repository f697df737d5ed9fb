// One node: its state (live), what its declaration carries, what it holds by
// its last report, what is failing there and why, what it keeps putting back
// (drift, as `mesh drift` lists it), its last refusal with how often it was
// said, its refusals (as `mesh log --kind refused` lists them, forged marked
// apart from replayed), and what became of its declarations.
'use strict';

function table(id, columns, rows, empty) {
  if (!rows.length) return el('p', { id, class: 'empty' }, empty);
  return el('table', { id },
    el('thead', {}, el('tr', {}, columns.map(([, label]) => el('th', {}, label)))),
    el('tbody', {}, rows.map((r) => el('tr', { class: r.rowClass }, columns.map(([k]) => el('td', {}, r[k] ?? '-'))))));
}

// Forged is somebody trying (another key, mesh or node); replayed is the mesh's own older declaration
// delivered again. The page keeps them apart as mesh log --kind refused-forged does.
function lastRefusal(x) {
  if (!x) return el('p', { id: 'last-refusal', class: 'empty' }, 'nothing refused');
  return el('p', { id: 'last-refusal', class: x.fault === 'forged' ? 'forged' : '' },
    `${x.fault}${x.serial === null ? '' : ` serial ${x.serial}`}: ${x.reason}; said ${x.times === 1 ? 'once' : `${x.times} times in a row`}`,
    x.times === 1 ? `, at ${when(x.refused_at)}` : `, first at ${when(x.first_at)}, last at ${when(x.refused_at)}`);
}

const when = (t) => (t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) : '-');

function summary(s) {
  return el('dl', { id: 'status', class: 'summary' },
    el('dt', {}, 'state'), el('dd', { class: `state ${stateClass(s.state)}` }, s.state),
    el('dt', {}, 'stale'), el('dd', { class: s.stale ? 'stale' : '' },
      s.stale ? `stale: what it holds expired at ${when(s.holds_until)}` : s.holds_until ? `no: holds until ${when(s.holds_until)}` : '-'),
    el('dt', {}, 'site'), el('dd', {}, s.site),
    el('dt', {}, 'serial declared / applied'), el('dd', {}, `${s.declared ?? '-'} / ${s.applied ?? '-'}`),
    el('dt', {}, 'last report'), el('dd', {}, s.report_age),
    el('dt', {}, 'failing'), el('dd', {}, s.failing.length ? s.failing.join(', ') : 'nothing'));
}

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  const name = new URLSearchParams(location.search).get('name') || '';
  main.querySelector('h1').textContent = `node ${name}`;
  try {
    const d = await getJSON(`/api/node?name=${encodeURIComponent(name)}`);
    const status = summary(d.status);
    const rep = d.report;
    main.append(status,
      el('h2', {}, 'declared: what its next declaration carries'),
      table('declared', [['id', 'resource'], ['kind', 'kind']], d.declared.resources, 'nothing declared'),
      el('h2', {}, rep ? `holds, by its report of serial ${rep.serial} (${rep.report_age} ago)` : 'holds'),
      table('held', [['id', 'resource'], ['kind', 'kind'], ['target', 'target'], ['origin', 'origin']], rep ? rep.held : [], rep ? 'it reported nothing' : 'never reported'),
      el('h2', {}, 'failing'),
      table('failed', [['id', 'resource'], ['error', 'error']], d.failing, 'nothing failing'),
      el('h2', {}, 'drift: what it put back (mesh drift)'),
      table('drift', [['resource', 'resource'], ['last_hour', 'last hour'], ['times', 'in all'], ['last', 'last'], ['fighting', 'fighting']],
        d.drift.map((r) => ({ ...r, last: when(r.last_at), fighting: r.fighting ? 'FIGHTING' : '' })), 'nothing put back'),
      el('h2', {}, 'last refusal, repeats counted (inventory.refusal)'),
      lastRefusal(d.refusal),
      el('h2', {}, 'refusals (mesh log --kind refused; forged: --kind refused-forged)'),
      table('refusals', [['seq', 'seq'], ['at', 'at'], ['serial', 'serial'], ['fault', 'fault'], ['reason', 'reason']],
        d.refusals.slice().reverse().map((r) => ({ seq: r.seq, at: when(r.at), serial: r.detail.serial, fault: r.detail.fault, reason: r.detail.reason, rowClass: r.detail.fault === 'forged' ? 'forged' : undefined })),
        'nothing refused'),
      el('h2', {}, 'declarations'),
      el('p', {}, el('a', { id: 'declared-link', href: `/declared?node=${encodeURIComponent(name)}&at=now` }, 'what it was declared at a time, and what changed')),
      table('history', [['serial', 'serial'], ['state', 'state'], ['issued', 'issued'], ['acknowledged', 'applied'], ['superseded', 'superseded']],
        d.declared.history.map((h) => ({ serial: h.serial, state: h.state, issued: when(h.issued_at), acknowledged: when(h.acknowledged_at), superseded: when(h.superseded_at) })),
        'never declared'));
    let shown = status;
    fleetStream((rows) => {
      const r = rows.get(name);
      if (!r) return;
      const next = summary(r);
      shown.replaceWith(next);
      shown = next;
    });
    ready();
  } catch (err) { failed(err); }
});
