// Change-freeze windows (read-only): each window, what it covers, waiting,
// holding, ended or overridden, and how many nodes it holds now, as
// assignment.freeze_status has it and `mesh freeze list` prints it. Adding,
// overriding and removing a window is the CLI's: the console writes nothing.
'use strict';

const when = (t) => (t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) : '-');

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  try {
    const rows = await getJSON('/api/freezes');
    const holding = rows.filter((r) => r.state === 'holding');
    main.append(
      el('p', { id: 'count', class: 'count' }, `${rows.length} window${rows.length === 1 ? '' : 's'}, ${holding.length} holding ` +
        `${holding.reduce((a, r) => a + r.holds, 0)} node${holding.reduce((a, r) => a + r.holds, 0) === 1 ? '' : 's'} now`),
      rows.length
        ? el('table', { id: 'freezes' },
          el('thead', {}, el('tr', {}, ['freeze', 'from', 'until', 'site', 'module', 'state', 'holds', 'override'].map((h) => el('th', {}, h)))),
          el('tbody', {}, rows.map((r) => el('tr', { 'data-key': r.id },
            el('td', { class: 'c-id num' }, r.id),
            el('td', { class: 'c-from' }, when(r.from_at)),
            el('td', { class: 'c-until' }, when(r.until_at)),
            el('td', { class: 'c-site' }, r.site ?? 'every site'),
            el('td', { class: 'c-module' }, r.module ?? 'every module'),
            el('td', { class: `c-state ${r.state}` }, r.state),
            el('td', { class: 'c-holds num' }, r.holds),
            el('td', { class: 'c-override' }, r.override_reason === null ? '-' : `${when(r.overridden_at)}: ${r.override_reason}`)))))
        : el('p', { id: 'freezes', class: 'empty' }, 'no freeze window: mesh freeze add makes one'));
    setLive('', true);
    ready();
  } catch (err) { failed(err); ready(); }
});
