// The catalogue (B2): each module, its version, the commit it was built
// from, whether its source moved past that, and where it runs.
'use strict';

document.addEventListener('DOMContentLoaded', async () => {
  const main = document.getElementById('main');
  try {
    const mods = await getJSON('/api/catalogue');
    const behind = (m) => (m.behind === true ? `behind (source at ${m.source_head.slice(0, 12)})` : m.behind === false ? 'current' : 'not known');
    const tbody = el('tbody', {}, mods.map((m) => el('tr', { 'data-module': m.module },
      el('td', {}, m.module),
      el('td', { class: 'num' }, m.version ?? '-'),
      el('td', {}, m.origin),
      el('td', { class: 'mono' }, m.built_commit ? m.built_commit.slice(0, 12) : '-'),
      el('td', { class: m.behind ? 'behind' : '' }, behind(m)),
      el('td', { class: 'mono' }, m.source ? `${m.source} ${m.source_ref}` : '-'),
      el('td', {}, m.nodes.length ? m.nodes.flatMap((n, i) => (i ? [', ', nodeLink(n)] : [nodeLink(n)])) : '-'))));
    main.append(el('p', { class: 'count' }, `${mods.length} module${mods.length === 1 ? '' : 's'}`),
      mods.length ? el('table', { id: 'catalogue' },
        el('thead', {}, el('tr', {}, ['module', 'version', 'origin', 'commit', 'behind', 'source', 'runs on'].map((h) => el('th', {}, h)))), tbody)
        : el('p', { class: 'empty' }, 'no module yet: mesh module add FILE'));
    setLive('', true);
    ready();
  } catch (err) { failed(err); }
});
