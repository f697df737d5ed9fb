// Promises (Q1, read-only): each promise in words, kept or broken and what
// breaks it, as assignment.promise_state has it and `mesh promise list`
// prints it. Making and removing promises is the CLI's: the console writes
// nothing.
'use strict';

const when = (t) => (t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) : '-');

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  try {
    const rows = await getJSON('/api/promises');
    const broken = rows.filter((r) => r.state === 'broken').length;
    main.append(
      el('p', { id: 'count', class: 'count' }, `${rows.length} promise${rows.length === 1 ? '' : 's'}, ${broken} broken`),
      rows.length
        ? el('table', { id: 'promises' },
          el('thead', {}, el('tr', {}, ['name', 'state', 'promise', 'why broken', 'made'].map((h) => el('th', {}, h)))),
          el('tbody', {}, rows.map((r) => el('tr', { 'data-key': r.name },
            el('td', { class: 'c-name' }, r.name),
            el('td', { class: `c-state ${r.state === 'broken' ? 'broken' : 'kept'}` }, r.state),
            el('td', { class: 'c-promise' }, r.promise),
            el('td', { class: 'c-why' }, r.why ?? '-'),
            el('td', { class: 'c-made' }, when(r.made_at))))))
        : el('p', { id: 'promises', class: 'empty' }, 'no promise yet: mesh promise add makes one'));
    setLive('', true);
    ready();
  } catch (err) { failed(err); ready(); }
});
