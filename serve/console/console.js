// serve/console/console.js — pure-serve's web console: one module at a time from
// GET /v1/MODULE (its stored lists in pages, a form per event and query, its source) and live
// figures from GET /metrics. Plain JavaScript modules, no libraries (values.js shows values,
// figures.js computes the figures); every URL is relative, so the console also works behind a
// proxy that serves pure-serve under a path.
'use strict';
import { $, boundedText, cellValue, el, Num, parseJSON, renderValue, show } from './values.js';
import { figures, parseMetrics } from './figures.js';
import { historyPanel } from './history.js';

(() => {
  const POLL_MS = 2000;
  const state = {
    modules: [],          // names, from /health
    module: null,         // the one shown
    iface: null,          // its GET /v1/MODULE
    ifaceText: null,      // the same as it came (to tell a changed interface after a reconnect)
    shown: 0,             // ticket of the newest selectModule: an older one's answer is dropped
    token: null,          // the token (sent with every request once set): this variable only, never storage or cookies
    list: null,           // the open list (openList)
    metrics: null,        // the last poll: {at, samples}
    offline: null,        // when the server stopped answering (a Date), null while it answers
    asOf: null,           // the past sequence lists and queries read (as_of=SEQ), null: the present
    history: null,        // the history view (history.js): {panel, refresh}
  };

  // ---- HTTP ---------------------------------------------------------------------------------------------
  // Every request carries the token once one is set (reads need one when the server has read
  // tokens, events one of scope write). A 401 or 403 asks for a token, naming what the server
  // said (one dialog at a time, shared by the requests that wait for it), and sends the request
  // again with it; the background polls (ask = false) never ask.
  async function request(method, path, body, headers, ask = true) {
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();  // the time shown is the last attempt's, not the dialog's
      const sent = state.token;
      const h = { ...(headers || {}) };
      if (sent !== null) h.Authorization = `Bearer ${sent}`;
      const res = await fetch(path, { method, body, headers: h, cache: 'no-store' });
      const text = await res.text();
      let json = null;
      try { json = text ? parseJSON(text) : null; } catch (e) { json = null; }
      const refused = (res.status === 401 || res.status === 403) && res.headers.has('WWW-Authenticate');
      if (refused && ask && attempt < 3) {
        if (state.token !== sent) continue;  // a token was given meanwhile: try it
        if (res.status === 401 && sent !== null) { state.token = null; renderTokenState(); }
        const why = `${sent === null ? 'The server needs a token' : 'The server refused the token'} (${res.status}): ` +
          (json && json.error ? json.error : text);
        if (await tokenFor(why)) continue;
      }
      return { status: res.status, text, json, ms: performance.now() - started };
    }
  }
  let asking = null;  // the token dialog open now, shared by every request waiting for a token
  function tokenFor(why) {
    if (!asking) asking = askToken(why).finally(() => { asking = null; });
    return asking;
  }
  const moduleUrl = (rest) => `v1/${encodeURIComponent(state.module)}${rest || ''}`;

  // ---- modules and health ---------------------------------------------------------------------------
  async function loadHealth() {
    let r;
    try {
      r = await request('GET', 'health');
    } catch (e) {
      return offline(e.message);
    }
    const mods = r.json && r.json.modules ? r.json.modules : null;
    if (!mods && r.status >= 500) return offline(`GET /health answered ${r.status}`);  // a proxy's, not pure-serve's
    const names = Object.keys(mods || {});
    const changed = names.join('\n') !== state.modules.join('\n');
    state.modules = names;
    if (changed && state.module) renderModuleNav();
    const bad = names.filter((m) => mods[m] !== 'serving');
    const pill = $('#health');
    pill.textContent = r.status === 200 ? 'serving' : mods ? `unhealthy: ${bad.map((m) => `${m} (${mods[m]})`).join(', ')}` : `health: ${r.status}`;
    pill.className = 'pill ' + (r.status === 200 ? 'ok' : 'bad');
    await online();
  }

  function renderModuleNav() {
    const nav = $('#modules');
    nav.replaceChildren(...state.modules.map((m) =>
      el('a', { href: '#' + encodeURIComponent(m), class: m === state.module ? 'current' : null, 'data-module': m, text: m })));
  }

  async function selectModule() {
    const wanted = decodeURIComponent(location.hash.slice(1));
    const name = state.modules.includes(wanted) ? wanted : state.modules[0];
    if (!name) {
      $('#module').replaceChildren(el('p', { class: 'muted', text: 'This server serves no module.' }));
      return;
    }
    state.module = name;
    state.list = null;
    state.asOf = null;  // a sequence is one module's
    renderModuleNav();
    const ticket = ++state.shown;
    let iface, source;
    try {
      [iface, source] = await Promise.all([request('GET', moduleUrl()), request('GET', moduleUrl('/source'))]);
    } catch (e) {
      return offline(e.message);
    }
    if (ticket !== state.shown) return;  // another module was chosen meanwhile
    if (iface.status !== 200 || !iface.json) {
      $('#module').replaceChildren(el('p', { class: 'result', 'data-state': 'error', text: `GET /v1/${name}: ${iface.text}` }));
      return;
    }
    state.iface = iface.json;
    state.ifaceText = iface.text;
    renderTokenState();
    renderModule(source.status === 200 && source.json ? source.json.source : null);
    pollMetrics();
  }

  // ---- the module page ------------------------------------------------------------------------------
  function renderModule(source) {
    const iface = state.iface;
    const lists = el('section', { class: 'panel', id: 'lists' }, el('h2', { text: 'Stored lists' }), el('div', { id: 'lists-body' }, listsTable()));
    const table = el('section', { class: 'panel', id: 'table', hidden: true });
    const events = el('section', { class: 'panel', id: 'events' }, el('h2', { text: 'Events' }),
      iface.events.length ? iface.events.map((fn) => callForm(fn, 'event')) : el('p', { class: 'muted', text: 'No events.' }));
    const queries = el('section', { class: 'panel', id: 'queries' }, el('h2', { text: 'Queries' }),
      iface.queries.length ? iface.queries.map((fn) => callForm(fn, 'query')) : el('p', { class: 'muted', text: 'No queries.' }));
    const src = el('section', { class: 'panel wide', id: 'source' }, el('h2', { text: `Source — ${iface.module}.pure` }),
      source === null ? el('p', { class: 'muted', text: 'The source is not available.' }) : highlight(source));
    const upgrade = source === null ? null : upgradePanel(source);
    state.history = historyPanel({ request: (query) => request('GET', moduleUrl(`/events?${query}`)),
      events: iface.events.map((fn) => fn.name), readAsOf: (seq) => setAsOf(String(seq)) });
    $('#module').replaceChildren(asOfPanel(), el('div', { class: 'column' }, lists, table), el('div', { class: 'column' }, events, queries),
      state.history.panel, src, upgrade);
    renderAsOf();
    if (iface.lists.length) openList(iface.lists[0].name);
    state.history.refresh();
  }

  // ---- reading as of a past sequence ------------------------------------------------------------------
  // While state.asOf is set, list pages and queries carry as_of=SEQ (the answers name the sequence
  // they read) and no event is sent. A sequence is taken only once the server has read at it (the
  // open list's page, or the first list's): a 410 past retention says the oldest readable one.
  function asOfPanel() {
    const input = el('input', { type: 'text', id: 'as-of-seq', inputmode: 'numeric', placeholder: 'sequence',
      autocomplete: 'off', spellcheck: 'false' });
    return el('section', { class: 'panel wide', id: 'as-of' },
      el('form', { class: 'table-tools', id: 'as-of-form', onsubmit: (e) => { e.preventDefault(); setAsOf(input.value); } },
        el('label', { for: 'as-of-seq', text: 'Read as of sequence' }), input,
        el('button', { type: 'submit', id: 'as-of-set', text: 'Read as of' }),
        el('button', { type: 'button', class: 'secondary', id: 'as-of-clear', text: 'Back to the present', hidden: true,
          onclick: () => clearAsOf() }),
        el('span', { id: 'as-of-state', 'aria-live': 'polite' })),
      el('div', { id: 'as-of-error', class: 'result', 'data-state': 'error', hidden: true }));
  }

  function renderAsOf() {
    const past = state.asOf !== null;
    $('#as-of').classList.toggle('past', past);
    $('#as-of-clear').hidden = !past;
    $('#as-of-state').textContent = past
      ? `Showing the state as of sequence ${state.asOf}: lists and queries read as_of=${state.asOf}. Events cannot be sent while viewing the past.`
      : 'Showing the present.';
    for (const b of document.querySelectorAll("form.call[data-kind='event'] button[type=submit]")) b.disabled = past;
    const note = $('#events-past');
    if (note) note.remove();
    if (past) $('#events h2').after(el('p', { id: 'events-past', class: 'past-note',
      text: `Viewing sequence ${state.asOf}, the past: events cannot be sent. Go back to the present to send one.` }));
    if (state.iface) $('#lists-body').replaceChildren(listsTable());
  }

  let asOfTicket = 0;
  async function setAsOf(text) {
    const error = $('#as-of-error');
    const ticket = ++asOfTicket, shown = state.shown;  // a newer choice, or another module, wins
    const v = String(text).trim();
    $('#as-of-seq').value = v;
    if (!/^\d{1,16}$/.test(v)) {
      error.hidden = false;
      error.replaceChildren(`not read: '${v}' is not a sequence number (a whole number 0 or more)`);
      return;
    }
    const name = state.list ? state.list.name : state.iface.lists.length ? state.iface.lists[0].name : null;
    let seq = Number(v);
    if (name !== null) {  // the server reads at it first: an answer, or why not
      let r;
      try {
        r = await request('GET', moduleUrl(`/lists/${encodeURIComponent(name)}?limit=1&as_of=${seq}`));
      } catch (e) {
        if (ticket !== asOfTicket || shown !== state.shown) return;
        error.hidden = false;
        error.replaceChildren(`no answer from the server (${e.message})`);
        return offline(e.message);
      }
      if (ticket !== asOfTicket || shown !== state.shown) return;
      if (r.status !== 200 || !r.json) {
        const j = r.json || Object.create(null);
        error.hidden = false;
        error.replaceChildren(`not read as of ${seq} (${r.status}): `, boundedText(j.error ? String(j.error) : r.text),
          ...(j.oldest === undefined ? [] : [el('span', {}, `. The oldest readable sequence is ${show(j.oldest)}: `,
            el('button', { type: 'button', class: 'secondary', id: 'as-of-oldest', text: `Read as of ${show(j.oldest)}`,
              onclick: () => setAsOf(show(j.oldest)) }))]));
        return;
      }
      seq = Number(show(r.json.as_of));
    }
    error.hidden = true;
    state.asOf = seq;
    renderAsOf();
    if (state.list) loadPage();
  }

  function clearAsOf() {
    asOfTicket++;
    state.asOf = null;
    $('#as-of-error').hidden = true;
    $('#as-of-seq').value = '';
    renderAsOf();
    if (state.list) loadPage();
  }

  const colsOf = (desc) => desc.key.map((c) => ({ ...c, key: true })).concat(desc.fields.map((c) => ({ ...c, key: false })));

  function listsTable() {
    const iface = state.iface;
    if (!iface.lists.length) return el('p', { class: 'muted', text: 'This module stores nothing.' });
    const cols = (cs) => cs.map((c) => `${c.name}: ${c.type}`).join(', ');
    return el('table', { class: 'lists' },
      el('thead', {}, el('tr', {}, ['list', 'key', 'fields', state.asOf === null ? 'rows' : 'rows now'].map((h) => el('th', { text: h })))),
      el('tbody', {}, iface.lists.map((d) => el('tr', { 'data-list': d.name, class: state.list && state.list.name === d.name ? 'open' : null },
        el('td', {}, el('button', { class: 'secondary', text: d.name, onclick: () => openList(d.name) })),
        el('td', { text: d.kind === 'seq' ? '(position)' : cols(d.key) }),
        el('td', { text: cols(d.fields) }),
        el('td', { class: 'num count', text: show(d.count) })))));
  }

  async function refreshCounts() {
    let r;
    try {
      r = await request('GET', moduleUrl());
    } catch (e) {
      return offline(e.message);
    }
    if (r.status !== 200 || !r.json) return;
    state.iface.lists = r.json.lists;
    $('#lists-body').replaceChildren(listsTable());
  }

  // ---- a stored list, a page at a time --------------------------------------------------------------
  // The page shown is l.view ({after, stack, prefix, limit}: stack holds the 'after' of each page
  // before it); a click asks for another view, which becomes l.view only when its answer comes.
  // Each request takes a ticket and only the newest one's answer is shown, so overlapping requests
  // (a double click, a filter typed while a page loads, an event's refresh) never mix a page with
  // another's label. Prev and Next wait for the page in flight.
  function openList(name) {
    const desc = state.iface.lists.find((d) => d.name === name);
    const view = { after: null, stack: [], prefix: '', limit: state.list ? state.list.view.limit : 10 };
    state.list = { name, desc, view, wanted: view, next: null, ticket: 0, loading: false };
    for (const tr of document.querySelectorAll('#lists tr[data-list]')) tr.classList.toggle('open', tr.dataset.list === name);
    const panel = $('#table');
    panel.hidden = false;
    const prefix = el('input', { type: 'text', id: 'prefix', placeholder: desc.kind === 'seq' ? 'no key to filter' : 'key prefix',
      disabled: desc.kind === 'seq', 'aria-label': 'key prefix filter', autocomplete: 'off', spellcheck: 'false' });
    const limit = el('select', { id: 'limit', 'aria-label': 'rows per page' },
      [10, 25, 100, 1000].map((n) => el('option', { value: n, selected: n === view.limit, text: `${n} rows` })));
    const filter = (e) => {
      e.preventDefault();
      loadPage({ after: null, stack: [], prefix: prefix.value, limit: Number(limit.value) });
    };
    panel.replaceChildren(
      el('h2', {}, `${name} `, el('span', { class: 'muted', id: 'table-count' })),
      el('form', { class: 'table-tools', onsubmit: filter },
        prefix, limit, el('button', { type: 'submit', id: 'filter', text: 'Filter' }),
        el('button', { type: 'button', class: 'secondary', id: 'refresh', text: 'Refresh', onclick: () => loadPage() })),
      el('div', { class: 'scroll' }, el('table', { id: 'rows', 'aria-describedby': 'page-info' })),
      el('div', { class: 'pager' },
        el('button', { type: 'button', class: 'secondary', id: 'prev', text: '‹ Prev', disabled: true, onclick: () => page(-1) }),
        el('span', { id: 'page-info', class: 'muted', 'aria-live': 'polite' }),
        el('button', { type: 'button', class: 'secondary', id: 'next', text: 'Next ›', disabled: true, onclick: () => page(1) })),
      el('p', { id: 'page-error', class: 'result', 'data-state': 'error', hidden: true }));
    limit.addEventListener('change', filter);
    loadPage();
  }

  function page(direction) {
    const l = state.list;
    if (l.loading) return;
    const { after, stack } = l.view;
    if (direction > 0 && l.next !== null && l.next !== undefined) loadPage({ after: l.next, stack: [...stack, after] });
    if (direction < 0 && stack.length) loadPage({ after: stack[stack.length - 1], stack: stack.slice(0, -1) });
  }

  function pagerState() {
    const l = state.list;
    $('#prev').disabled = l.loading || l.view.stack.length === 0;
    $('#next').disabled = l.loading || l.next === null || l.next === undefined;
    $('#rows').setAttribute('aria-busy', String(l.loading));
  }

  // Asks for a view of the open list (changes to the one asked last; none: that one again).
  async function loadPage(changes) {
    const l = state.list;
    const want = { ...l.wanted, ...changes };
    const ticket = ++l.ticket;
    l.wanted = want;
    l.loading = true;
    pagerState();
    const params = new URLSearchParams({ limit: String(want.limit) });
    if (want.after !== null) params.set('after', want.after);
    if (want.prefix) params.set('prefix', want.prefix);
    const asOf = state.asOf;
    if (asOf !== null) params.set('as_of', String(asOf));
    let r = null, failure = null;
    try {
      r = await request('GET', moduleUrl(`/lists/${encodeURIComponent(l.name)}?${params}`));
    } catch (e) {
      failure = e;
    }
    if (state.list !== l || ticket !== l.ticket || asOf !== state.asOf) return;  // another list, page or point asked for
    l.loading = false;
    const error = $('#page-error');
    if (!r || r.status !== 200 || !r.json) {
      l.wanted = l.view;  // the page shown stays, and so do its Prev and Next
      pagerState();
      error.hidden = false;
      error.replaceChildren(r ? `${r.status}: ` : `no answer from the server (${failure.message})`,
        r ? boundedText(r.json && r.json.error ? String(r.json.error) : r.text) : '');
      if (!r) offline(failure.message);
      return;
    }
    error.hidden = true;
    l.view = want;
    l.next = r.json.next;
    const cols = l.desc.kind === 'seq' ? l.desc.fields.map((c) => ({ ...c, key: false })) : colsOf(l.desc);
    const rows = r.json.rows;
    $('#rows').replaceChildren(
      el('thead', {}, el('tr', {}, cols.map((c) => el('th', { class: c.key ? 'key' : null, scope: 'col' }, c.name, ' ', el('span', { class: 'type', text: c.type }))))),
      el('tbody', {}, rows.length ? rows.map((row) => el('tr', {}, cols.map((c) =>
        el('td', { class: row[c.name] instanceof Num ? 'num' : null }, cellValue(row[c.name]))))) :
        el('tr', {}, el('td', { colspan: cols.length, class: 'muted', text: want.prefix ? `no key starts with ${JSON.stringify(want.prefix)}` : 'empty' }))));
    const first = want.stack.length * want.limit + 1;
    const count = show(r.json.count);
    $('#table-count').textContent = `${count} row${count === '1' ? '' : 's'}` +
      (r.json.as_of !== undefined ? ` as of seq ${show(r.json.as_of)}` : '');
    $('#page-info').textContent = rows.length ? `rows ${first}–${first + rows.length - 1}${want.prefix ? ` with prefix ${JSON.stringify(want.prefix)}` : ` of ${count}`}` : '';
    pagerState();
  }

  // ---- forms for events and queries -------------------------------------------------------------------
  const SCALARS = ['int', 'num', 'text', 'bool'];
  const isItem = (t) => Array.isArray(t.fields) && t.key_count === undefined && !t.type.startsWith('seq') && !t.type.startsWith('list');
  const INT_MIN = -(2n ** 63n), INT_MAX = 2n ** 63n - 1n;

  // An example of a value of type t as JSON, for a placeholder: ["a", "b"] for seq text, an item
  // with its fields ([{"sku": "a", "qty": 1}] for a seq of items).
  function example(t, k = 0) {
    const scalars = { int: ['1', '2'], num: ['1.5', '2.0'], text: ['"a"', '"b"'], bool: ['true', 'false'] };
    if (scalars[t.type]) return scalars[t.type][k];
    if (t.type.startsWith('seq ')) {
      const element = { type: t.type.slice(4), fields: t.fields };
      return Array.isArray(t.fields) ? `[${example(element)}]` : `[${example(element, 0)}, ${example(element, 1)}]`;
    }
    if (Array.isArray(t.fields)) return `{${t.fields.map((f) => `${JSON.stringify(f.name)}: ${example(f, k)}`).join(', ')}}`;
    return '…';
  }

  // A labelled text input (label for=id) and its error note; mark(error) shows a failed check on
  // it (class invalid, aria-invalid, aria-describedby naming the note) or clears it, and marks
  // keeps it under the field's path for the server's own refusals (markRejected).
  function textField(grid, id, path, t, placeholder, marks) {
    const input = el('input', { type: 'text', id, name: path, 'data-type': t.type, placeholder, autocomplete: 'off', spellcheck: 'false' });
    const note = el('span', { class: 'field-error', id: `${id}-error`, hidden: true });
    grid.append(el('label', { for: id }, path.split('.').pop(), ' ', el('span', { class: 'type', text: t.type })), input, note);
    const mark = (error) => {
      input.classList.toggle('invalid', !!error);
      if (error) {
        input.setAttribute('aria-invalid', 'true');
        input.setAttribute('aria-describedby', note.id);
      } else {
        input.removeAttribute('aria-invalid');
        input.removeAttribute('aria-describedby');
      }
      note.hidden = !error;
      note.textContent = error || '';
    };
    input.addEventListener('input', () => mark(null));
    marks.set(path, mark);
    return { input, mark };
  }

  // An input for a value of type t; read() gives {json} (JSON text) or {error}. idBase makes the
  // element ids unique in the page (a form's kind and name).
  function inputFor(t, path, grid, idBase, marks) {
    const id = `${idBase}-${path}`;
    if (t.type === 'bool') {
      const box = el('input', { type: 'checkbox', id, name: path, 'data-type': 'bool' });
      grid.append(el('label', { for: id }, path.split('.').pop(), ' ', el('span', { class: 'type', text: 'bool' })), box);
      return () => ({ json: box.checked ? 'true' : 'false' });
    }
    if (SCALARS.includes(t.type)) {
      const placeholder = { int: 'whole number', num: 'number, nan, inf or -inf', text: 'text' }[t.type];
      const { input, mark } = textField(grid, id, path, t, placeholder, marks);
      return () => {
        const r = checkScalar(t.type, input.value);
        mark(r.error);
        return r.error ? { error: `${path}: ${r.error}` } : r;
      };
    }
    if (isItem(t)) {
      const set = el('fieldset', {}, el('legend', { text: `${path}: ${t.type}` }));
      const inner = el('div', { class: 'params' });
      set.append(inner);
      grid.append(set);
      const readers = t.fields.map((f) => [f.name, inputFor(f, `${path}.${f.name}`, inner, idBase, marks)]);
      return () => {
        const parts = [];
        let error = null;
        for (const [name, read] of readers) {
          const r = read();
          if (r.error) error = error || r.error;
          else parts.push(`${JSON.stringify(name)}:${r.json}`);
        }
        return error ? { error } : { json: `{${parts.join(',')}}` };
      };
    }
    if (t.type.startsWith('seq ')) {  // a JSON array, sent as written (the server checks each element)
      const { input, mark } = textField(grid, id, path, t, example(t), marks);
      return () => {
        let error = null;
        try {
          if (!Array.isArray(JSON.parse(input.value.trim() || '[]'))) error = 'a JSON array is needed';
        } catch (e) {
          error = 'not JSON: ' + e.message;
        }
        mark(error);
        return error ? { error: `${path}: ${error}` } : { json: input.value.trim() || '[]' };
      };
    }
    grid.append(el('span', { text: path }), el('span', { class: 'field-error', text: `${t.type} cannot be passed over HTTP` }));
    return () => ({ error: `${path}: a ${t.type} cannot be passed over HTTP` });
  }

  function checkScalar(type, raw) {
    const v = raw.trim();
    if (type === 'text') return { json: JSON.stringify(raw) };
    if (type === 'int') {
      if (!/^[+-]?\d+$/.test(v)) return { error: v === '' ? 'an int is needed' : `'${v}' is not a whole number` };
      const n = BigInt(v);
      if (n < INT_MIN || n > INT_MAX) return { error: `${v} is beyond int's range (-2^63 .. 2^63-1)` };
      return { json: n.toString() };  // the digits themselves: exact beyond 2^53
    }
    if (type === 'num') {
      if (v === 'nan' || v === 'inf' || v === '-inf') return { json: JSON.stringify(v) };
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v)) return { error: v === '' ? 'a num is needed' : `'${v}' is not a number` };
      const n = Number(v);
      if (!Number.isFinite(n)) return { error: `${v} is too large for a num (write inf)` };
      return { json: Object.is(n, -0) ? '-0.0' : String(n) };
    }
    return { error: `unknown type ${type}` };
  }

  function callForm(fn, kind) {
    const grid = el('div', { class: 'params' });
    const marks = new Map();
    const readers = fn.params.map((p) => [p.name, inputFor(p, p.name, grid, `${kind}-${fn.name}`, marks)]);
    const result = el('div', { class: 'result', 'aria-live': 'polite' });
    const sig = `${kind} ${fn.name}(${fn.params.map((p) => `${p.name}: ${p.type}`).join(', ')})` +
      (fn.result ? ` -> ${fn.result.type}` : '');
    const button = el('button', { type: 'submit', text: kind === 'event' ? 'Send' : 'Run' });
    const form = el('form', { class: 'call', 'data-kind': kind, 'data-fn': fn.name, novalidate: true },
      el('h3', { class: 'mono', text: fn.name }), el('div', { class: 'sig', text: sig }),
      fn.params.length ? grid : null, el('div', { class: 'actions' }, button), result);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const parts = [];
      const errors = [];
      for (const [name, read] of readers) {
        const r = read();
        if (r.error) errors.push(r.error);
        else parts.push(`${JSON.stringify(name)}:${r.json}`);
      }
      if (errors.length) {
        setResult(result, 'error', `not sent: ${errors.join('; ')}`);
        return;
      }
      button.disabled = true;
      try {
        await send(fn, kind, `{${parts.join(',')}}`, result);
        markRejected(result, marks);
      } finally {
        button.disabled = kind === 'event' && state.asOf !== null;  // no event sent while viewing the past
      }
    });
    return form;
  }

  // A 400 that names a parameter ('skus[2]', 'l.label') marks the field it came from, as the form's
  // own check would have (a seq's elements are checked by the server only).
  function markRejected(result, marks) {
    const m = /^rejected \(400\): parameter '([^']*)': ([\s\S]*?)\s*\([\d.]+ ms\)$/.exec(result.textContent);
    if (result.dataset.state !== 'error' || !m) return;
    const mark = marks.get(m[1]) || marks.get(m[1].replace(/\[.*$/, ''));
    if (mark) mark(`${m[1]}: ${m[2]}`);
  }

  function setResult(box, kind, ...parts) {
    box.dataset.state = kind;
    box.replaceChildren(...parts.filter((p) => p !== null && p !== undefined));
  }

  async function send(fn, kind, body, box) {
    const headers = { 'Content-Type': 'application/json' };
    const asOf = kind === 'query' ? state.asOf : null;
    if (kind === 'event' && state.asOf !== null) {
      setResult(box, 'error', `not sent: the console shows the past (sequence ${state.asOf}); events cannot be sent ` +
        'while viewing it: go back to the present first');
      return;
    }
    if (kind === 'event' && state.iface.events_need_token && state.token === null &&
        !(await tokenFor('Events on this server need a token of scope write.'))) {
      setResult(box, 'error', 'not sent: no token given');
      return;
    }
    setResult(box, 'pending', 'sending…');
    let r;
    try {
      r = await request('POST', moduleUrl(`/${encodeURIComponent(fn.name)}${asOf === null ? '' : `?as_of=${asOf}`}`), body, headers);
    } catch (e) {  // no answer at all: for an event, whether it committed is unknown
      setResult(box, 'error', `no answer from the server (${e.message})${kind === 'event' ? ': whether the event committed is known once the server answers again' : ''}`);
      offline(e.message);
      return;
    }
    const ms = el('span', { class: 'elapsed', text: `  (${r.ms.toFixed(1)} ms)` });
    const j = r.json || Object.create(null);
    // a read as of a past point: the answer names the sequence it read
    const at = j.as_of !== undefined ? el('span', { class: 'as-of-note', text: ` · as of seq ${show(j.as_of)}` }) : null;
    if (kind === 'event' && (r.status === 200 || r.status === 409) && state.history) state.history.refresh();
    if (r.status === 200 && kind === 'event') {
      const shown = fn.result ? renderValue(fn.result, j.result) : null;  // an event that declares a result
      if (shown === null) setResult(box, 'ok', `committed · seq ${show(j.seq)}`, ms);
      else if (typeof shown === 'string') setResult(box, 'ok', `committed · seq ${show(j.seq)} → ${shown}`, ms);
      else setResult(box, 'ok', `committed · seq ${show(j.seq)} → `, el('div', {}, shown, ms));
      refreshCounts();
      if (state.list) loadPage();
    } else if (r.status === 200) {
      const shown = renderValue(fn.result, j.result);
      setResult(box, 'ok', typeof shown === 'string' ? `→ ${shown}` : '→ ', typeof shown === 'string' ? at : null,
        typeof shown === 'string' ? ms : el('div', {}, shown, at, ms));
    } else if (r.status === 409) {
      setResult(box, 'failed', 'failed (409): ', boundedText(String(j.reason)), at, ms);
    } else if (r.status === 401 || r.status === 403) {  // request() asked for a token; none was given
      setResult(box, 'error', `refused (${r.status}): `, boundedText(String(j.error)), ms);
    } else {
      setResult(box, 'error', `${r.status === 400 ? 'rejected' : 'error'} (${r.status}): `, boundedText(j.error ? String(j.error) : r.text), ms);
    }
  }

  // ---- the token: asked in a dialog, kept in state.token only ----------------------------------------
  function askToken(why) {
    const dialog = $('#token-dialog'), input = $('#token-input');
    $('#token-why').textContent = why;
    input.value = '';
    return new Promise((resolve) => {
      const done = (ok) => {
        $('#token-form').onsubmit = null;
        $('#token-cancel').onclick = null;
        dialog.onclose = null;
        if (ok && input.value.trim()) state.token = input.value.trim();
        input.value = '';  // not left in the page either
        if (dialog.open) dialog.close();
        renderTokenState();
        resolve(ok && state.token !== null);
      };
      $('#token-form').onsubmit = (e) => { e.preventDefault(); done(true); };
      $('#token-cancel').onclick = () => done(false);
      dialog.onclose = () => done(false);
      dialog.showModal();
      input.focus();
    });
  }

  function renderTokenState() {
    const pill = $('#token-state');
    const needed = state.iface && (state.iface.events_need_token || state.iface.reads_need_token);
    if (!needed && state.token === null) { pill.hidden = true; return; }
    pill.hidden = false;
    const scope = state.iface && !state.iface.reads_need_token ? 'Events on this server need a token of scope write.'
      : 'This server needs a token: of scope read to read, write to send events.';
    pill.replaceChildren(state.token === null ? 'token: not set' : 'token: set',
      el('button', { type: 'button', class: 'secondary', id: state.token === null ? 'token-set' : 'token-forget',
        text: state.token === null ? 'set' : 'forget',
        onclick: () => { if (state.token === null) tokenFor(scope); else { state.token = null; renderTokenState(); } } }));
  }

  // ---- upgrade: a new source's plan, then its application ----------------------------------------------
  // PUT /v1/MODULE/source?plan=1 answers the plan and changes nothing; Apply sends the same text
  // without plan=1 (with allow_drop=1 when the box is ticked), only after a plan of that very text
  // was shown. An edit of the text takes the plan back: what is applied is what was planned.
  function upgradePanel(source) {
    const text = el('textarea', { id: 'upgrade-source', rows: 12, spellcheck: 'false', 'aria-label': 'new source' });
    text.value = source;
    const drop = el('input', { type: 'checkbox', id: 'upgrade-drop' });
    const planButton = el('button', { type: 'button', id: 'upgrade-plan', text: 'Plan' });
    const applyButton = el('button', { type: 'button', id: 'upgrade-apply', class: 'secondary', text: 'Apply', disabled: true });
    const plan = el('pre', { id: 'upgrade-plan-text', class: 'source', hidden: true });
    const result = el('div', { class: 'result', id: 'upgrade-result', 'aria-live': 'polite' });
    let planned = null;  // the text whose plan is shown and allowed
    const put = (query) => request('PUT', moduleUrl('/source' + query), text.value, { 'Content-Type': 'text/plain' });
    const answerText = (r) => (r.json && (r.json.error || r.json.reason)) || r.text;
    text.addEventListener('input', () => { planned = null; applyButton.disabled = true; });
    planButton.addEventListener('click', async () => {
      planned = null;
      applyButton.disabled = true;
      setResult(result, 'pending', 'planning…');
      let r;
      try {
        r = await put('?plan=1' + (drop.checked ? '&allow_drop=1' : ''));
      } catch (e) {
        return setResult(result, 'error', `not planned: ${e.message}`);
      }
      const p = r.json && r.json.plan;
      plan.hidden = !p;
      plan.textContent = p ? p.text : '';
      if (r.status === 200 && r.json && r.json.upgraded === false) return setResult(result, 'ok', r.json.reason);
      if (r.status !== 200 || !p) return setResult(result, 'error', `refused (${r.status}): ${answerText(r)}`);
      if (!r.json.allowed) return setResult(result, 'error', `not allowed: ${r.json.reason}`);
      planned = text.value;
      applyButton.disabled = false;
      setResult(result, 'ok', `version ${r.json.version} → ${p.to}: review the plan, then Apply`);
    });
    applyButton.addEventListener('click', async () => {
      if (planned !== text.value) return;
      applyButton.disabled = true;
      setResult(result, 'pending', 'applying…');
      let r;
      try {
        r = await put(drop.checked ? '?allow_drop=1' : '');
      } catch (e) {
        return setResult(result, 'error', `no answer (the upgrade may or may not be applied): ${e.message}`);
      }
      planned = null;
      if (r.status !== 200 || !r.json || !r.json.upgraded)
        return setResult(result, 'error', `not applied (${r.status}): ${answerText(r)}`);
      setResult(result, 'ok', `upgraded to version ${r.json.version} at sequence ${r.json.sequence} (pause ${r.json.pause_ms} ms)`);
      const ticket = state.shown;
      setTimeout(() => { if (ticket === state.shown) selectModule(); }, 800);  // the new version's lists, events and source
    });
    return el('section', { class: 'panel wide', id: 'upgrade' }, el('h2', { text: 'Upgrade' }),
      el('p', { class: 'muted', text: 'Edit the source, ask for the plan, then apply it (docs/upgrades.md).' }),
      text, el('div', { class: 'actions' }, planButton, applyButton,
        el('label', {}, drop, ' allow dropping data (allow_drop=1)')),
      plan, result);
  }

  // ---- source, highlighted ---------------------------------------------------------------------------
  const KEYWORDS = new Set(['fn', 'event', 'query', 'type', 'list', 'seq', 'by', 'let', 'var', 'if', 'else', 'while', 'for',
    'in', 'return', 'break', 'continue', 'fail', 'and', 'or', 'not', 'true', 'false']);
  const TYPES = new Set(['int', 'num', 'text', 'bool', 'outcome']);
  const DECLARES = new Set(['fn', 'event', 'query', 'type', 'list']);

  function highlight(source) {
    const pre = el('pre', { class: 'source' });
    let line = el('span', { class: 'ln' });
    const push = (text, cls) => {
      const pieces = text.split('\n');
      pieces.forEach((piece, k) => {
        if (k > 0) {
          pre.append(line);
          line = el('span', { class: 'ln' });
        }
        if (piece) line.append(cls ? el('span', { class: cls, text: piece }) : piece);
      });
    };
    let i = 0, declaring = false;
    const n = source.length;
    while (i < n) {
      const c = source[i];
      let j = i + 1, cls = null;
      if (c === '/' && source[i + 1] === '/') {
        while (j < n && source[j] !== '\n') j++;
        cls = 'tok-com';
      } else if (c === '"') {
        // as the lexer reads it: quotes inside {interpolations} do not end the text
        let depth = 0;
        for (; j < n; j++) {
          const d = source[j];
          if (d === '\\') { j++; continue; }
          if (d === '{') depth++;
          else if (d === '}' && depth > 0) depth--;
          else if (d === '"' && depth === 0) { j++; break; }
          else if (d === '\n' && depth === 0) break;
        }
        cls = 'tok-str';
      } else if (/[0-9]/.test(c)) {
        while (j < n && /[0-9_.eE]/.test(source[j])) j++;
        cls = 'tok-num';
      } else if (/[A-Za-z_]/.test(c)) {
        while (j < n && /[A-Za-z0-9_]/.test(source[j])) j++;
        const word = source.slice(i, j);
        if (KEYWORDS.has(word)) cls = 'tok-kw';
        else if (TYPES.has(word)) cls = 'tok-type';
        else if (declaring) cls = 'tok-def';
        push(word, cls);
        declaring = DECLARES.has(word);
        i = j;
        continue;
      }
      push(source.slice(i, j), cls);
      if (!/\s/.test(c)) declaring = false;
      i = j;
    }
    pre.append(line);
    return pre;
  }

  // ---- live figures from /metrics ----------------------------------------------------------------------
  async function pollMetrics() {
    if (pollMetrics.busy || !state.module) return;
    pollMetrics.busy = true;
    try {
      const r = await request('GET', 'metrics', undefined, undefined, false);  // a poll never asks for a token
      if (r.status !== 200) {  // answered, but no figures: say so rather than leave the last ones
        state.metrics = null;
        $('#figures').replaceChildren(el('p', { class: 'muted', 'data-figure': 'none',
          text: `No figures: GET /metrics answered ${r.status}${r.json && r.json.error ? ` (${r.json.error})` : ''}.` }));
        return;
      }
      const now = { at: performance.now(), samples: parseMetrics(r.text) };
      const before = state.metrics;
      state.metrics = now;
      $('#figures').replaceChildren(...figures(now, before, state.module, POLL_MS).map(([id, label, value, note]) =>
        el('div', { class: 'figure', 'data-figure': id }, el('div', { class: 'label', text: label }),
          el('div', { class: 'value', text: value }), el('div', { class: 'note', text: note }))));
    } catch (e) {
      offline(e.message);
    } finally {
      pollMetrics.busy = false;
    }
  }

  // ---- the connection --------------------------------------------------------------------------------------
  // A request that gets no answer at all (the server stopped, the network went) makes the console
  // offline: a banner says since when, the health pill says disconnected, and the rows, results
  // and figures are marked as what they were then. The health poll goes on; its first answer
  // brings the console back: fresh figures, the module's counts and page (or the whole module
  // again when the server now serves another interface).
  function offline(why) {
    if (state.offline) return;
    state.offline = new Date();
    document.body.classList.add('offline');
    const banner = $('#offline');
    banner.hidden = false;
    banner.textContent = `Disconnected: the server has not answered since ${state.offline.toLocaleTimeString([], { hour12: false })} (${why}). ` +
      `The rows, results and figures below are from before then. Trying again every ${POLL_MS / 1000} s.`;
    const pill = $('#health');
    pill.textContent = 'disconnected';
    pill.className = 'pill bad';
  }

  async function online() {
    if (!state.offline) return;
    state.offline = null;
    state.metrics = null;  // a restarted server counts from 0 again: no rate across the gap
    document.body.classList.remove('offline');
    $('#offline').hidden = true;
    if (!state.iface || !state.modules.includes(state.module)) return selectModule();
    let r;
    try {
      r = await request('GET', moduleUrl());
    } catch (e) {
      return offline(e.message);
    }
    const shape = (text) => text.replace(/"count":\d+/g, '');
    if (r.status !== 200 || !r.json || shape(r.text) !== shape(state.ifaceText)) return selectModule();
    state.iface.lists = r.json.lists;
    $('#lists-body').replaceChildren(listsTable());
    if (state.list) loadPage();
    if (state.history) state.history.refresh();
    pollMetrics();
  }

  // ---- start ------------------------------------------------------------------------------------------
  async function start() {
    await loadHealth();
    await selectModule();
    window.addEventListener('hashchange', selectModule);
    setInterval(() => {
      if (document.hidden) return;
      if (!state.offline) pollMetrics();
      loadHealth();
    }, POLL_MS);
  }
  start();
})();
