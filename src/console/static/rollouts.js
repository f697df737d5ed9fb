// Rollouts (C1, read-only): every rollout as assignment.rollout_status has it,
// and one of them (the newest, or ?id=N) with its nodes, as `mesh rollout
// status [--rollout N]` prints it. Moving a rollout is the CLI's: the console
// writes nothing.
'use strict';

const when = (t) => (t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) : '-');

function table(id, columns, rows, empty) {
  if (!rows.length) return el('p', { id, class: 'empty' }, empty);
  return el('table', { id },
    el('thead', {}, el('tr', {}, columns.map(([, label]) => el('th', {}, label)))),
    el('tbody', {}, rows.map((r) => el('tr', { 'data-key': r.key }, columns.map(([k]) => el('td', { class: `c-${k}` }, r[k] ?? '-'))))));
}

/** The line `mesh rollout status` starts with. */
function headline(s) {
  return `rollout ${s.id}: ${s.state}${s.wave ? ` at wave ${s.wave} of ${s.waves}` : ''}${s.wave_list ? ` (${s.wave_list.join(',')})` : ''}`;
}

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  const id = new URLSearchParams(location.search).get('id');
  try {
    const d = await getJSON(`/api/rollouts${id ? `?id=${encodeURIComponent(id)}` : ''}`);
    const s = d.shown;
    main.append(
      s ? el('section', { id: 'shown' },
        el('h2', { id: 'headline' }, headline(s)),
        el('p', { id: 'progress', class: 'count' }, s.state === 'holding'
          ? `${s.pending} node${s.pending === 1 ? '' : 's'} with a held change (mesh plan --all); mesh rollout start releases them`
          // The view's count of nodes is shadowed by the node list readRolloutStatus adds under the same name.
          : `${s.released} of ${s.nodes.length} released: ${s.applied} applied, ${s.failing} failing, ${s.waiting} waiting`),
        s.reason ? el('p', { id: 'reason', class: 'error' }, `why: ${s.reason}`) : null,
        table('rollout-nodes', [['node', 'node'], ['wave', 'wave'], ['state', 'state'], ['why', 'why']],
          s.nodes.map((n) => ({ key: n.node, node: n.node, wave: n.wave, state: n.state, why: n.why })), 'no node in it yet'))
        : el('p', { id: 'shown', class: 'empty' }, 'no rollout yet: mesh rollout hold starts one'),
      el('h2', {}, 'every rollout'),
      table('rollouts', [['link', 'rollout'], ['state', 'state'], ['wave', 'wave'], ['released', 'released'], ['applied', 'applied'],
        ['failing', 'failing'], ['waiting', 'waiting'], ['reason', 'why'], ['held', 'held'], ['ended', 'ended']],
        d.rollouts.map((r) => ({ ...r, key: r.id, link: el('a', { href: `/rollouts?id=${r.id}` }, String(r.id)),
          wave: r.wave ? `${r.wave} of ${r.waves}` : '-', released: `${r.released} of ${r.nodes}`, held: when(r.held_at), ended: when(r.ended_at) })),
        'no rollout yet'));
    setLive('', true);
    ready();
  } catch (err) { failed(err); ready(); }
});
