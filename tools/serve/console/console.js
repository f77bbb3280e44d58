// tools/serve/console/console.js — pure-serve's web console: one module at a time from
// GET /v1/MODULE (its stored lists in pages, a form per event and query, its source) and live
// figures from GET /metrics. Plain JavaScript, no libraries; every URL is relative, so the
// console also works behind a proxy that serves pure-serve under a path.
'use strict';

(() => {
  const POLL_MS = 2000;
  const state = {
    modules: [],          // names, from /health
    module: null,         // the one shown
    iface: null,          // its GET /v1/MODULE
    token: null,          // the token (sent with every request once set): this variable only, never storage or cookies
    list: null,           // the open list: {name, desc, after, stack, prefix, limit}
    metrics: null,        // the last poll: {at, samples}
  };

  // ---- JSON that keeps numbers exact ----------------------------------------------------------
  // pure-serve writes ints exactly over 64 bits; JSON.parse would round those beyond 2^53. Numbers
  // become Num (their text), objects have no prototype (a field may be called __proto__).
  class Num {
    constructor(text) { this.text = text; }
    toString() { return this.text; }
  }
  function parseJSON(text) {
    let i = 0;
    const fail = (what) => { throw new SyntaxError(`bad JSON at byte ${i}: ${what}`); };
    const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
    const stringRe = /"(?:[^"\\]|\\[\s\S])*"/y, numberRe = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    function str() {
      stringRe.lastIndex = i;
      const m = stringRe.exec(text);
      if (!m) fail('unterminated string');
      i = stringRe.lastIndex;
      return JSON.parse(m[0]);
    }
    function value() {
      ws();
      const c = text[i];
      if (c === '{') {
        i++;
        const o = Object.create(null);
        ws();
        if (text[i] === '}') { i++; return o; }
        for (;;) {
          ws();
          if (text[i] !== '"') fail('expected a key');
          const k = str();
          ws();
          if (text[i++] !== ':') fail("expected ':'");
          o[k] = value();
          ws();
          const d = text[i++];
          if (d === '}') return o;
          if (d !== ',') fail("expected ',' or '}'");
        }
      }
      if (c === '[') {
        i++;
        const a = [];
        ws();
        if (text[i] === ']') { i++; return a; }
        for (;;) {
          a.push(value());
          ws();
          const d = text[i++];
          if (d === ']') return a;
          if (d !== ',') fail("expected ',' or ']'");
        }
      }
      if (c === '"') return str();
      for (const [word, v] of [['true', true], ['false', false], ['null', null]])
        if (text.startsWith(word, i)) { i += word.length; return v; }
      numberRe.lastIndex = i;
      const m = numberRe.exec(text);
      if (!m) fail('unexpected character');
      i = numberRe.lastIndex;
      return new Num(m[0]);
    }
    const v = value();
    ws();
    if (i !== text.length) fail('extra data');
    return v;
  }

  // ---- small DOM helpers ----------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  const $ = (sel, root = document) => root.querySelector(sel);

  function show(v) {  // a value as pure-serve wrote it
    if (v instanceof Num) return v.text;
    if (v === null) return 'null';
    if (typeof v === 'string') return v;
    if (typeof v === 'boolean') return String(v);
    if (Array.isArray(v)) return '[' + v.map(showNested).join(', ') + ']';
    return '{' + Object.keys(v).map((k) => `${k}: ${showNested(v[k])}`).join(', ') + '}';
  }
  const showNested = (v) => (typeof v === 'string' ? JSON.stringify(v) : show(v));

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
    const pill = $('#health');
    try {
      const r = await request('GET', 'health');
      const mods = r.json && r.json.modules ? r.json.modules : {};
      state.modules = Object.keys(mods);
      const bad = state.modules.filter((m) => mods[m] !== 'serving');
      pill.textContent = r.status === 200 ? 'serving' : `unhealthy: ${bad.map((m) => `${m} (${mods[m]})`).join(', ')}`;
      pill.className = 'pill ' + (r.status === 200 ? 'ok' : 'bad');
    } catch (e) {
      pill.textContent = 'server unreachable';
      pill.className = 'pill bad';
    }
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
    renderModuleNav();
    const [iface, source] = await Promise.all([request('GET', moduleUrl()), request('GET', moduleUrl('/source'))]);
    if (iface.status !== 200 || !iface.json) {
      $('#module').replaceChildren(el('p', { class: 'result', 'data-state': 'error', text: `GET /v1/${name}: ${iface.text}` }));
      return;
    }
    state.iface = iface.json;
    renderTokenState();
    renderModule(source.status === 200 && source.json ? source.json.source : null);
    pollMetrics();
  }

  // ---- the module page ------------------------------------------------------------------------------
  function renderModule(source) {
    const iface = state.iface;
    const lists = el('section', { class: 'panel', id: 'lists' }, el('h2', { text: 'Stored lists' }), listsTable());
    const table = el('section', { class: 'panel', id: 'table', hidden: true });
    const events = el('section', { class: 'panel', id: 'events' }, el('h2', { text: 'Events' }),
      iface.events.length ? iface.events.map((fn) => callForm(fn, 'event')) : el('p', { class: 'muted', text: 'No events.' }));
    const queries = el('section', { class: 'panel', id: 'queries' }, el('h2', { text: 'Queries' }),
      iface.queries.length ? iface.queries.map((fn) => callForm(fn, 'query')) : el('p', { class: 'muted', text: 'No queries.' }));
    const src = el('section', { class: 'panel wide', id: 'source' }, el('h2', { text: `Source — ${iface.module}.pure` }),
      source === null ? el('p', { class: 'muted', text: 'The source is not available.' }) : highlight(source));
    $('#module').replaceChildren(el('div', { class: 'column' }, lists, table), el('div', { class: 'column' }, events, queries), src);
    if (iface.lists.length) openList(iface.lists[0].name);
  }

  const colsOf = (desc) => desc.key.map((c) => ({ ...c, key: true })).concat(desc.fields.map((c) => ({ ...c, key: false })));

  function listsTable() {
    const iface = state.iface;
    if (!iface.lists.length) return el('p', { class: 'muted', text: 'This module stores nothing.' });
    const cols = (cs) => cs.map((c) => `${c.name}: ${c.type}`).join(', ');
    return el('table', { class: 'lists' },
      el('thead', {}, el('tr', {}, ['list', 'key', 'fields', 'rows'].map((h) => el('th', { text: h })))),
      el('tbody', {}, iface.lists.map((d) => el('tr', { 'data-list': d.name, class: state.list && state.list.name === d.name ? 'open' : null },
        el('td', {}, el('button', { class: 'secondary', text: d.name, onclick: () => openList(d.name) })),
        el('td', { text: d.kind === 'seq' ? '(position)' : cols(d.key) }),
        el('td', { text: cols(d.fields) }),
        el('td', { class: 'num count', text: show(d.count) })))));
  }

  async function refreshCounts() {
    const r = await request('GET', moduleUrl());
    if (r.status !== 200 || !r.json) return;
    state.iface.lists = r.json.lists;
    $('#lists table').replaceWith(listsTable());
  }

  // ---- a stored list, a page at a time --------------------------------------------------------------
  function openList(name) {
    const desc = state.iface.lists.find((d) => d.name === name);
    state.list = { name, desc, after: null, stack: [], prefix: '', limit: state.list ? state.list.limit : 10 };
    for (const tr of document.querySelectorAll('#lists tr[data-list]')) tr.classList.toggle('open', tr.dataset.list === name);
    const panel = $('#table');
    panel.hidden = false;
    const prefix = el('input', { type: 'text', id: 'prefix', placeholder: desc.kind === 'seq' ? 'no key to filter' : 'key prefix',
      disabled: desc.kind === 'seq', 'aria-label': 'key prefix filter' });
    const limit = el('select', { id: 'limit', 'aria-label': 'rows per page' },
      [10, 25, 100, 1000].map((n) => el('option', { value: n, selected: n === state.list.limit, text: `${n} rows` })));
    const filter = (e) => {
      e.preventDefault();
      Object.assign(state.list, { prefix: prefix.value, after: null, stack: [], limit: Number(limit.value) });
      loadPage();
    };
    panel.replaceChildren(
      el('h2', {}, `${name} `, el('span', { class: 'muted', id: 'table-count' })),
      el('form', { class: 'table-tools', onsubmit: filter },
        prefix, limit, el('button', { type: 'submit', id: 'filter', text: 'Filter' }),
        el('button', { type: 'button', class: 'secondary', id: 'refresh', text: 'Refresh', onclick: () => loadPage() })),
      el('div', { class: 'scroll' }, el('table', { id: 'rows' })),
      el('div', { class: 'pager' },
        el('button', { type: 'button', class: 'secondary', id: 'prev', text: '‹ Prev', onclick: () => page(-1) }),
        el('span', { id: 'page-info', class: 'muted' }),
        el('button', { type: 'button', class: 'secondary', id: 'next', text: 'Next ›', onclick: () => page(1) })),
      el('p', { id: 'page-error', class: 'result', 'data-state': 'error', hidden: true }));
    limit.addEventListener('change', filter);
    loadPage();
  }

  function page(direction) {
    const l = state.list;
    if (direction > 0) {
      if (l.next === null || l.next === undefined) return;
      l.stack.push(l.after);
      l.after = l.next;
    } else {
      if (!l.stack.length) return;
      l.after = l.stack.pop();
    }
    loadPage();
  }

  async function loadPage() {
    const l = state.list;
    const params = new URLSearchParams({ limit: String(l.limit) });
    if (l.after !== null) params.set('after', l.after);
    if (l.prefix) params.set('prefix', l.prefix);
    const r = await request('GET', moduleUrl(`/lists/${encodeURIComponent(l.name)}?${params}`));
    if (state.list !== l) return;  // another list was opened meanwhile
    const error = $('#page-error');
    if (r.status !== 200 || !r.json) {
      error.hidden = false;
      error.textContent = `${r.status}: ${r.json && r.json.error ? r.json.error : r.text}`;
      return;
    }
    error.hidden = true;
    const cols = l.desc.kind === 'seq' ? l.desc.fields.map((c) => ({ ...c, key: false })) : colsOf(l.desc);
    const rows = r.json.rows;
    l.next = r.json.next;
    $('#rows').replaceChildren(
      el('thead', {}, el('tr', {}, cols.map((c) => el('th', { class: c.key ? 'key' : null }, c.name, ' ', el('span', { class: 'type', text: c.type }))))),
      el('tbody', {}, rows.length ? rows.map((row) => el('tr', {}, cols.map((c) =>
        el('td', { class: row[c.name] instanceof Num ? 'num' : null, text: show(row[c.name]) })))) :
        el('tr', {}, el('td', { colspan: cols.length, class: 'muted', text: l.prefix ? `no key starts with "${l.prefix}"` : 'empty' }))));
    const first = l.stack.length * l.limit + 1;
    const count = show(r.json.count);
    $('#table-count').textContent = `${count} row${count === '1' ? '' : 's'}`;
    $('#page-info').textContent = rows.length ? `rows ${first}–${first + rows.length - 1}${l.prefix ? ` with prefix "${l.prefix}"` : ` of ${count}`}` : '';
    $('#prev').disabled = l.stack.length === 0;
    $('#next').disabled = l.next === null;
  }

  // ---- forms for events and queries -------------------------------------------------------------------
  const SCALARS = ['int', 'num', 'text', 'bool'];
  const isItem = (t) => Array.isArray(t.fields) && t.key_count === undefined && !t.type.startsWith('seq') && !t.type.startsWith('list');
  const INT_MIN = -(2n ** 63n), INT_MAX = 2n ** 63n - 1n;

  // An input for a value of type t; read() gives {json} (JSON text) or {error}.
  function inputFor(t, path, grid) {
    if (t.type === 'bool') {
      const box = el('input', { type: 'checkbox', name: path, 'data-type': 'bool' });
      grid.append(el('label', { for: null }, path.split('.').pop(), ' ', el('span', { class: 'type', text: 'bool' })), box);
      return () => ({ json: box.checked ? 'true' : 'false' });
    }
    if (SCALARS.includes(t.type)) {
      const placeholder = { int: 'whole number', num: 'number, nan, inf or -inf', text: 'text' }[t.type];
      const input = el('input', { type: 'text', name: path, 'data-type': t.type, placeholder, autocomplete: 'off', spellcheck: 'false' });
      const note = el('span', { class: 'field-error', hidden: true });
      grid.append(el('label', {}, path.split('.').pop(), ' ', el('span', { class: 'type', text: t.type })), input, note);
      input.addEventListener('input', () => { input.classList.remove('invalid'); note.hidden = true; });
      return () => {
        const r = checkScalar(t.type, input.value);
        input.classList.toggle('invalid', !!r.error);
        note.hidden = !r.error;
        note.textContent = r.error ? r.error : '';
        return r.error ? { error: `${path}: ${r.error}` } : r;
      };
    }
    if (isItem(t)) {
      const set = el('fieldset', {}, el('legend', { text: `${path}: ${t.type}` }));
      const inner = el('div', { class: 'params' });
      set.append(inner);
      grid.append(set);
      const readers = t.fields.map((f) => [f.name, inputFor(f, `${path}.${f.name}`, inner)]);
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
      const input = el('input', { type: 'text', name: path, 'data-type': t.type, autocomplete: 'off', spellcheck: 'false',
        placeholder: Array.isArray(t.fields) ? 'JSON array of objects or rows: [{...}] or [[...]]' : 'JSON array: [1, 2]' });
      const note = el('span', { class: 'field-error', hidden: true });
      grid.append(el('label', {}, path.split('.').pop(), ' ', el('span', { class: 'type', text: t.type })), input, note);
      input.addEventListener('input', () => { input.classList.remove('invalid'); note.hidden = true; });
      return () => {
        let error = null;
        try {
          if (!Array.isArray(JSON.parse(input.value.trim() || '[]'))) error = 'a JSON array is needed';
        } catch (e) {
          error = 'not JSON: ' + e.message;
        }
        input.classList.toggle('invalid', !!error);
        note.hidden = !error;
        note.textContent = error || '';
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
    const readers = fn.params.map((p) => [p.name, inputFor(p, p.name, grid)]);
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
      } finally {
        button.disabled = false;
      }
    });
    return form;
  }

  function setResult(box, kind, text, extra) {
    box.dataset.state = kind;
    box.replaceChildren(text, ...(extra ? [extra] : []));
  }

  async function send(fn, kind, body, box) {
    const headers = { 'Content-Type': 'application/json' };
    if (kind === 'event' && state.iface.events_need_token && state.token === null &&
        !(await tokenFor('Events on this server need a token of scope write.'))) {
      setResult(box, 'error', 'not sent: no token given');
      return;
    }
    setResult(box, 'pending', 'sending…');
    let r;
    try {
      r = await request('POST', moduleUrl(`/${encodeURIComponent(fn.name)}`), body, headers);
    } catch (e) {
      setResult(box, 'error', `not answered: ${e.message}`);
      return;
    }
    const ms = el('span', { class: 'elapsed', text: `  (${r.ms.toFixed(1)} ms)` });
    const j = r.json || Object.create(null);
    if (r.status === 200 && kind === 'event') {
      const shown = fn.result ? renderValue(fn.result, j.result) : null;  // an event that declares a result
      if (shown === null) setResult(box, 'ok', `committed · seq ${show(j.seq)}`, ms);
      else if (typeof shown === 'string') setResult(box, 'ok', `committed · seq ${show(j.seq)} → ${shown}`, ms);
      else setResult(box, 'ok', `committed · seq ${show(j.seq)} → `, el('div', {}, shown, ms));
      refreshCounts();
      if (state.list) loadPage();
    } else if (r.status === 200) {
      const shown = renderValue(fn.result, j.result);
      setResult(box, 'ok', typeof shown === 'string' ? `→ ${shown}` : '→ ', typeof shown === 'string' ? ms : el('div', {}, shown, ms));
    } else if (r.status === 409) {
      setResult(box, 'failed', `failed (409): ${j.reason}`, ms);
    } else if (r.status === 401 || r.status === 403) {  // request() asked for a token; none was given
      setResult(box, 'error', `refused (${r.status}): ${j.error}`, ms);
    } else {
      setResult(box, 'error', `${r.status === 400 ? 'rejected' : 'error'} (${r.status}): ${j.error || r.text}`, ms);
    }
  }

  // A query's result: a string for scalars, a table for lists and items.
  function renderValue(t, v) {
    if (Array.isArray(v)) {
      if (!v.length) return '[] (empty)';
      if (v[0] === null || typeof v[0] !== 'object' || v[0] instanceof Num)
        return `[${v.map(showNested).join(', ')}] (${v.length})`;
      const names = Object.keys(v[0]);
      return el('table', {}, el('thead', {}, el('tr', {}, names.map((n) => el('th', { text: n })))),
        el('tbody', {}, v.map((row) => el('tr', {}, names.map((n) => el('td', { text: show(row[n]) }))))));
    }
    if (v !== null && typeof v === 'object' && !(v instanceof Num))
      return el('table', {}, el('tbody', {}, Object.keys(v).map((k) => el('tr', {}, el('th', { text: k }), el('td', { text: show(v[k]) })))));
    return typeof v === 'string' ? JSON.stringify(v) : show(v);
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
  function parseMetrics(text) {
    const samples = [];
    for (const lineText of text.split('\n')) {
      if (!lineText || lineText[0] === '#') continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(lineText);
      if (!m) continue;
      const labels = {};
      for (const lm of (m[2] || '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[lm[1]] = lm[2];
      samples.push({ name: m[1], labels, value: Number(m[3]) });
    }
    return samples;
  }
  function sum(samples, name, where) {
    let total = null;
    for (const s of samples) {
      if (s.name !== name) continue;
      if (where && Object.entries(where).some(([k, v]) => s.labels[k] !== v)) continue;
      total = (total || 0) + s.value;
    }
    return total;
  }
  // The 0.99 quantile of a histogram, interpolated in its bucket as Prometheus does.
  function p99(samples, prevSamples, name) {
    const buckets = (ss) => ss ? ss.filter((s) => s.name === `${name}_bucket`).map((s) => [s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value]) : null;
    let now = buckets(samples);
    const before = buckets(prevSamples);
    let window = 'since start';
    if (before && before.length === now.length) {
      const diff = now.map(([le, v], k) => [le, v - before[k][1]]);
      if (diff[diff.length - 1][1] > 0) { now = diff; window = `last ${POLL_MS / 1000} s`; }
    }
    if (!now.length) return null;
    const total = now[now.length - 1][1];
    if (!total) return { text: '—', note: 'no events yet' };
    const rank = 0.99 * total;
    let lower = 0, below = 0;
    for (const [le, count] of now) {
      if (count >= rank) {
        if (le === Infinity) return { text: `> ${fmtSeconds(lower)}`, note: window };
        const s = lower + (le - lower) * (count > below ? (rank - below) / (count - below) : 1);
        return { text: fmtSeconds(s), note: window };
      }
      lower = le;
      below = count;
    }
    return null;
  }
  const fmtSeconds = (s) => (s < 1e-3 ? `${(s * 1e6).toFixed(0)} µs` : s < 1 ? `${(s * 1e3).toFixed(s < 0.01 ? 2 : 1)} ms` : `${s.toFixed(2)} s`);
  function fmtBytes(b) {
    if (b === null) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
    return `${u ? b.toFixed(1) : b} ${units[u]}`;
  }
  const fmtRate = (r) => (r === null ? '—' : r >= 100 ? r.toFixed(0) : r.toFixed(1));

  async function pollMetrics() {
    if (pollMetrics.busy || !state.module) return;
    pollMetrics.busy = true;
    try {
      const r = await request('GET', 'metrics', undefined, undefined, false);  // a poll never asks for a token
      if (r.status !== 200) return;
      const at = performance.now();
      const samples = parseMetrics(r.text);
      const prev = state.metrics;
      state.metrics = { at, samples };
      const mod = { module: state.module };
      const dt = prev ? (at - prev.at) / 1000 : 0;
      // a counter's rate over the last poll; null when the counter does not exist
      const rate = (name, where) => {
        const v = sum(samples, name, where);
        if (v === null) return null;
        if (!prev || dt <= 0) return undefined;  // exists, rate known after the next poll
        const before = sum(prev.samples, name, where);
        return before === null ? undefined : Math.max(0, v - before) / dt;
      };
      const shownRate = (x) => (x === null ? '—' : x === undefined ? '…' : fmtRate(x));
      const events = rate('pure_events_total', { ...mod, outcome: 'committed' });
      const failed = rate('pure_events_total', { ...mod, outcome: 'failed' });
      // pure_requests_total leaves out pairs never seen: none is 0
      const queries = sum(samples, 'pure_requests_total', { route: 'query' }) || 0;
      const queriesBefore = prev ? sum(prev.samples, 'pure_requests_total', { route: 'query' }) || 0 : null;
      const latency = p99(samples, prev && prev.samples, 'pure_event_seconds');
      const bursts = rate('pure_log_bursts_total', mod);
      const held = sum(samples, 'pure_snapshots_held', mod);
      const stateBytes = sum(samples, 'pure_state_bytes', mod), structure = sum(samples, 'pure_structure_bytes', mod);
      const perByte = stateBytes ? (stateBytes + (structure || 0)) / stateBytes : null;
      const figures = [
        ['events-rate', 'events/s', shownRate(events), failed ? `${fmtRate(failed)}/s failed` : 'committed'],
        ['event-p99', 'p99 event latency', latency ? latency.text : '—', latency ? latency.note : 'all modules'],
        ['queries-rate', 'queries/s', queriesBefore === null || dt <= 0 ? '…' : fmtRate(Math.max(0, queries - queriesBefore) / dt), 'all modules'],
        ['log-bursts', 'log bursts/s', shownRate(bursts), bursts === null ? 'no log in this build' : 'group commits'],
        ['snapshots-held', 'snapshots held', held === null ? '—' : String(held), held === null ? 'not measured' : 'by readers'],
        ['memory-per-byte', 'memory / state byte', perByte === null ? '—' : perByte.toFixed(2), stateBytes ? `${fmtBytes(stateBytes)} of rows` : 'no rows yet'],
        ['queue', 'queued events', fmtMaybe(sum(samples, 'pure_queue_events', mod)), `seq ${fmtMaybe(sum(samples, 'pure_visible_sequence', mod))} visible`],
        ['resident', 'resident memory', fmtBytes(sum(samples, 'pure_resident_bytes')), `${fmtMaybe(sum(samples, 'pure_connections'))} connections`],
      ];
      const box = $('#figures');
      box.replaceChildren(...figures.map(([id, label, value, note]) =>
        el('div', { class: 'figure', 'data-figure': id }, el('div', { class: 'label', text: label }),
          el('div', { class: 'value', text: value }), el('div', { class: 'note', text: note }))));
    } catch (e) {
      // the health pill tells when the server is gone
    } finally {
      pollMetrics.busy = false;
    }
  }
  const fmtMaybe = (v) => (v === null ? '—' : String(v));

  // ---- start ------------------------------------------------------------------------------------------
  async function start() {
    await loadHealth();
    await selectModule();
    window.addEventListener('hashchange', selectModule);
    setInterval(() => {
      if (document.hidden) return;
      pollMetrics();
      loadHealth();
    }, POLL_MS);
  }
  start();
})();
