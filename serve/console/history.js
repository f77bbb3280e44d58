// serve/console/history.js — the console's history view: a module's audit trail from
// GET /v1/MODULE/events (docs/history.md), newest first, a page at a time, filtered by event name
// and commit time (the API's own event= and since=), each row with a button that reads the module
// as of it. console.js imports it and gives it its request function; values.js shows the values.
import { boundedText, cellValue, el, show } from './values.js';

export const HISTORY_LIMITS = [10, 25, 100];
const PAGE = 1000;         // records per request (limits::kHistoryPageRecords)
const MAX_REQUESTS = 16;   // requests per page shown: a filter that matches little stops and says how far it looked

// A query string; a time's colons stay as they are (readable in the server's request log).
export const queryString = (params) =>
  Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/%3A/gi, ':')}`).join('&');

// The API lists oldest first from a cursor; a page newest first is found by reading windows of
// sequences backwards from `below` (each window wider than the last while few match), keeping the
// newest `limit` records that match. Returns {records (newest first), searched (the lowest
// sequence read), complete (nothing older matches)} or {error} with the API's answer.
export async function newestBefore(get, below, floor, limit, filters) {
  let hi = below, span = limit, requests = 0;
  const found = [];  // oldest first, windows prepended
  while (found.length < limit && hi - 1 > floor) {
    if (requests >= MAX_REQUESTS) return { records: found.slice(-limit).reverse(), searched: hi, complete: false };
    const lo = Math.max(floor, hi - 1 - span);
    const batch = [];
    let after = lo;
    for (;;) {  // the window's matches, a page at a time (more than PAGE, or the scan's byte limit)
      const r = await get({ after: String(after), before: String(hi), limit: String(PAGE), ...filters });
      requests++;
      if (r.status !== 200 || !r.json) return { error: r };
      for (const record of r.json.events) batch.push(record);
      const next = r.json.next_after;
      if (next === null || next === undefined) break;
      after = Number(next.text);
    }
    found.unshift(...batch);
    hi = lo + 1;
    span = Math.min(PAGE, span * 4);  // a window is one page, unless its records pass the scan's byte limit
  }
  // complete: nothing below the page matches (the window read last may hold more than the page)
  return { records: found.slice(-limit).reverse(), searched: hi, complete: hi - 1 <= floor && found.length <= limit };
}

// Where the page older than `result` (a newestBefore answer for `limit`) starts: below its oldest
// row when it is full (its window may hold more), else below what was searched (all shown).
export const olderBelow = (result, limit) => (result.records.length === limit
  ? Number(result.records[result.records.length - 1].sequence.text) : result.searched);

// One record's cells: sequence, time, event, arguments, outcome.
function recordRow(record, readAsOf) {
  const seq = show(record.sequence);
  const failed = record.failed === true;
  const name = record.upgrade !== undefined ? `upgrade to version ${show(record.upgrade)}`
    : record.event === null ? `event #${show(record.event_index)} (version ${show(record.version)})` : record.event;
  const outcome = record.upgrade !== undefined ? el('span', { class: 'muted', text: 'upgraded' })
    : failed ? el('span', { class: 'failed' }, 'failed: ', boundedText(String(record.reason))) : el('span', { class: 'committed', text: 'committed' });
  return el('tr', { 'data-seq': seq, class: failed ? 'failed-event' : null },
    el('td', { class: 'num', text: seq }),
    el('td', { class: 'at', text: record.at === null ? '(no time)' : record.at.replace('T', ' ').replace('Z', ' UTC') }),
    el('td', { class: 'event', text: name }),
    el('td', {}, record.args === undefined ? '' : cellValue(record.args)),
    el('td', {}, outcome),
    el('td', {}, el('button', { type: 'button', class: 'secondary as-of-this', text: 'as of this',
      title: `read the lists and queries as of sequence ${seq}`, onclick: () => readAsOf(Number(seq)) })));
}

// The panel: filters, the page, Newer/Older, errors as the server gave them.
// ctx: {request(query string) -> {status, json, text}, events: [names], readAsOf(seq)}.
// view: {below, oldest, filters, limit, stack}: the page of the newest matches below `below`
// (null: the present), stack the `below` of each newer page.
export function historyPanel(ctx) {
  const eventSelect = el('select', { id: 'history-event', 'aria-label': 'event name filter' },
    el('option', { value: '', text: 'every event' }), ctx.events.map((n) => el('option', { value: n, text: n })));
  const since = el('input', { type: 'text', id: 'history-since', placeholder: 'since 2026-12-07T00:00:00Z or ms',
    'aria-label': 'committed at or after (UTC time or milliseconds)', autocomplete: 'off', spellcheck: 'false' });
  const limit = el('select', { id: 'history-limit', 'aria-label': 'events per page' },
    HISTORY_LIMITS.map((n) => el('option', { value: n, text: `${n} events` })));
  const rows = el('table', { id: 'history-rows', 'aria-describedby': 'history-info' });
  const info = el('span', { id: 'history-info', class: 'muted', 'aria-live': 'polite' });
  const error = el('p', { id: 'history-error', class: 'result', 'data-state': 'error', hidden: true });
  const newer = el('button', { type: 'button', class: 'secondary', id: 'history-newer', text: '‹ Newer', disabled: true });
  const older = el('button', { type: 'button', class: 'secondary', id: 'history-older', text: 'Older ›', disabled: true });
  let view = null, shown = null, ticket = 0;

  async function load(want) {
    const mine = ++ticket;
    newer.disabled = older.disabled = true;
    rows.setAttribute('aria-busy', 'true');
    const get = (params) => ctx.request(queryString(params));
    let result;
    try {
      let below = want.below, floor = 0;
      if (below === null) {  // the present: where the log ends, and where it begins
        const probe = await get({ after: '9007199254740991', limit: '1' });
        if (probe.status !== 200 || !probe.json) throw { answer: probe };
        below = Number(probe.json.through.text) + 1;
        const oldest = probe.json.oldest === null ? below : Number(probe.json.oldest.text);
        want = { ...want, below, oldest };
      }
      floor = Math.max(0, want.oldest - 1);  // nothing before the oldest record the directory holds
      if (want.filters.since) {  // nothing older than the first record at or after the time
        const first = await get({ since: want.filters.since, limit: '1' });
        if (first.status !== 200 || !first.json) throw { answer: first };
        if (first.json.events.length) floor = Math.max(floor, Number(first.json.events[0].sequence.text) - 1);
        else if (first.json.next_after === null) floor = below - 1;  // none at all
      }
      result = await newestBefore(get, below, floor, want.limit, want.filters);
      if (result.error) throw { answer: result.error };
    } catch (e) {
      if (mine !== ticket) return;
      rows.setAttribute('aria-busy', 'false');
      newer.disabled = !(view && view.stack.length);
      older.disabled = !(shown && !shown.complete);
      error.hidden = false;
      const r = e.answer;
      error.replaceChildren(r ? `GET /v1/…/events answered ${r.status}: ` : `no answer from the server (${e.message})`,
        r ? boundedText(r.json && r.json.error ? String(r.json.error) : r.text) : '');
      return;
    }
    if (mine !== ticket) return;
    error.hidden = true;
    view = want;
    shown = result;
    rows.setAttribute('aria-busy', 'false');
    rows.replaceChildren(
      el('thead', {}, el('tr', {}, ['seq', 'committed (UTC)', 'event', 'arguments', 'outcome', ''].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, result.records.length ? result.records.map((r) => recordRow(r, ctx.readAsOf))
        : el('tr', {}, el('td', { colspan: 6, class: 'muted', text: 'no events match' }))));
    const n = result.records.length;
    const range = n ? `seq ${show(result.records[0].sequence)} down to ${show(result.records[n - 1].sequence)}` : 'none';
    info.textContent = `${n} event${n === 1 ? '' : 's'}, newest first: ${range}` +
      (result.complete ? '' : n < want.limit ? ` (searched down to seq ${result.searched}; Older looks further)` : '');
    newer.disabled = view.stack.length === 0;
    older.disabled = result.complete;
  }

  const filtersNow = () => {
    const f = {};
    if (eventSelect.value) f.event = eventSelect.value;
    if (since.value.trim()) f.since = since.value.trim();
    return f;
  };
  const fresh = (e) => {
    if (e) e.preventDefault();
    return load({ below: null, oldest: 1, filters: filtersNow(), limit: Number(limit.value), stack: [] });
  };
  older.addEventListener('click', () => {
    if (!shown || shown.complete) return;
    load({ ...view, below: olderBelow(shown, view.limit), stack: [...view.stack, view.below] });
  });
  newer.addEventListener('click', () => {
    if (!view || !view.stack.length) return;
    load({ ...view, below: view.stack[view.stack.length - 1], stack: view.stack.slice(0, -1) });
  });
  limit.addEventListener('change', fresh);
  const panel = el('section', { class: 'panel wide', id: 'history' },
    el('h2', { text: 'History' }),
    el('form', { class: 'table-tools', id: 'history-tools', onsubmit: fresh },
      eventSelect, since, limit, el('button', { type: 'submit', id: 'history-filter', text: 'Filter' }),
      el('button', { type: 'button', class: 'secondary', id: 'history-refresh', text: 'Refresh', onclick: () => fresh() })),
    el('div', { class: 'scroll' }, rows),
    el('div', { class: 'pager' }, newer, info, older),
    error);
  return { panel, refresh: () => fresh() };
}
