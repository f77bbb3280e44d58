// serve/console/values.js — how the console reads and shows values: JSON that keeps numbers
// exact, DOM building (text only, never HTML), and bounded display of long values and results.
// Depends on nothing but the browser; console.js imports it.

// What one page renders at most: a long value or result shows its start and says what is hidden.
export const CELL_CHARS = 160;      // a table cell, until clicked
export const EXPAND_CHARS = 100000; // a clicked cell, or a result's text after "show more"
export const TEXT_CHARS = 1000;     // a result's text at first
export const RESULT_ROWS = 100;     // a result's rows at first, and each "show more"

// ---- JSON that keeps numbers exact ----------------------------------------------------------------
// pure-serve writes ints exactly over 64 bits; JSON.parse would round those beyond 2^53. Numbers
// become Num (their text), objects have no prototype (a field may be called __proto__).
export class Num {
  constructor(text) { this.text = text; }
  toString() { return this.text; }
}

export function parseJSON(text) {
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

// ---- small DOM helpers ------------------------------------------------------------------------------
// Text goes in as text nodes or textContent: a value is never parsed as HTML.
export function el(tag, attrs, ...children) {
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
export const $ = (sel, root = document) => root.querySelector(sel);
export const count = (n) => n.toLocaleString('en-US');
const plural = (n, word) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

// ---- values as text ---------------------------------------------------------------------------------
// v as pure-serve wrote it (texts inside lists and items quoted), cut after limit characters: only
// what is shown is built, so a huge value costs what its first characters cost.
export function showUpTo(v, limit) {
  const parts = [];
  let length = 0;
  const put = (s) => { parts.push(s); length += s.length; return length <= limit; };
  function walk(x, nested) {
    if (x instanceof Num) return put(x.text);
    if (x === null) return put('null');
    if (typeof x === 'string') return put(nested ? JSON.stringify(x) : x);
    if (typeof x === 'boolean') return put(String(x));
    if (Array.isArray(x)) {
      if (!put('[')) return false;
      for (let k = 0; k < x.length; k++) if ((k && !put(', ')) || !walk(x[k], true)) return false;
      return put(']');
    }
    if (!put('{')) return false;
    let first = true;
    for (const k of Object.keys(x)) {
      if ((!first && !put(', ')) || !put(`${k}: `) || !walk(x[k], true)) return false;
      first = false;
    }
    return put('}');
  }
  const whole = walk(v, false);
  const text = parts.join('');
  return whole ? { text, cut: false } : { text: cutAt(text, limit), cut: true };
}
export const show = (v) => showUpTo(v, Infinity).text;
export const showNested = (v) => (typeof v === 'string' ? JSON.stringify(v) : show(v));

// s's first n UTF-16 units, without splitting a surrogate pair
function cutAt(s, n) {
  if (s.length <= n) return s;
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

// ---- text with what is invisible made visible ---------------------------------------------------------
// An empty text, whitespace at either end and control characters would not show as themselves:
// each becomes a marked glyph (class ws) with its meaning in the title: "" for the empty text, ·
// for a space, ⇥ a tab, ↵ a line break, ␍ a carriage return, ␣ other whitespace, \u0007 (as
// JSON writes it) a control character.
const GLYPHS = { ' ': '·', '\t': '⇥', '\n': '↵', '\r': '␍' };
const mark = (glyphs, title) => el('span', { class: 'ws', title, text: glyphs });
const glyphsOf = (s) => [...s].map((c) => GLYPHS[c] || '␣').join('');
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

function middleNodes(s) {
  const out = [];
  let at = 0;
  for (const m of s.matchAll(CONTROL)) {
    if (m.index > at) out.push(s.slice(at, m.index));
    const hex = m[0].charCodeAt(0).toString(16).padStart(4, '0');
    out.push(mark(`\\u${hex}`, `control character U+${hex.toUpperCase()}`));
    at = m.index + 1;
  }
  if (at < s.length) out.push(s.slice(at));
  return out;
}

// s as nodes; whole: s is the entire text (its end is shown, so trailing whitespace is marked)
export function textNodes(s, whole = true) {
  if (s === '' && whole) return [mark('""', 'empty text')];
  const lead = /^\s*/.exec(s)[0];
  const rest = s.slice(lead.length);
  const trail = whole ? /\s*$/.exec(rest)[0] : '';
  const nodes = [];
  if (lead) nodes.push(mark(glyphsOf(lead), `whitespace at the start: ${plural(lead.length, 'character')}`));
  nodes.push(...middleNodes(rest.slice(0, rest.length - trail.length)));
  if (trail) nodes.push(mark(glyphsOf(trail), `whitespace at the end: ${plural(trail.length, 'character')}`));
  return nodes;
}

// ---- a table cell -----------------------------------------------------------------------------------------
// A value in a cell: at most CELL_CHARS characters, wrapped within the cell's bounded width; a
// longer one shows its start and a button with what is hidden, and a click shows it all (up to
// EXPAND_CHARS) and back.
export function cellValue(v) {
  const isText = typeof v === 'string';
  const box = el('span', { class: 'val' });
  const first = isText ? { text: cutAt(v, CELL_CHARS), cut: v.length > CELL_CHARS } : showUpTo(v, CELL_CHARS);
  if (!first.cut) {
    box.append(...(isText ? textNodes(v) : [first.text]));
    return box;
  }
  const button = el('button', { type: 'button', class: 'more', 'aria-expanded': 'false' });
  let open = false;
  const render = () => {
    const shown = open ? (isText ? { text: cutAt(v, EXPAND_CHARS), cut: v.length > EXPAND_CHARS } : showUpTo(v, EXPAND_CHARS)) : first;
    const body = el('span', { class: 'val-text' }, isText ? textNodes(shown.text, !shown.cut) : shown.text, shown.cut ? '…' : null);
    const hidden = isText ? v.length - shown.text.length : null;
    button.textContent = open ? (shown.cut ? `less (${plural(hidden, 'more character')} not shown)` : 'less')
      : (hidden === null ? 'more' : `+${plural(hidden, 'character')}`);
    button.setAttribute('aria-expanded', String(open));
    box.classList.toggle('open', open);
    box.replaceChildren(body, ' ', button);
  };
  box.classList.add('long');
  box.addEventListener('click', () => {
    if (String(window.getSelection())) return;  // selecting text to copy it is not a click to toggle
    open = !open;
    render();
  });
  render();
  return box;
}

// ---- results ---------------------------------------------------------------------------------------------
// A query's or event's result: a string when short and flat, else a node. Lists and items become
// tables of RESULT_ROWS rows at first; a long text shows TEXT_CHARS characters; each says what it
// hides and shows more on request.
export function renderValue(t, v) {
  if (Array.isArray(v)) {
    if (!v.length) return '[] (empty)';
    if (v[0] === null || typeof v[0] !== 'object' || v[0] instanceof Num)
      return longText(`[${v.map(showNested).join(', ')}]`, ` (${count(v.length)})`);
    return rowsTable(Object.keys(v[0]), v);
  }
  if (v !== null && typeof v === 'object' && !(v instanceof Num))
    return el('table', {}, el('tbody', {}, Object.keys(v).map((k) => el('tr', {}, el('th', { text: k }), el('td', {}, cellValue(v[k]))))));
  return longText(typeof v === 'string' ? JSON.stringify(v) : show(v), '');
}

// A text from the server (a failure's reason, an error) bounded like a result's.
export const boundedText = (text) => longText(text, '');

function longText(text, suffix) {
  if (text.length <= TEXT_CHARS) return text + suffix;
  const body = document.createTextNode('');
  const more = el('button', { type: 'button', class: 'more' });
  let shown = 0;
  const grow = () => {
    shown = Math.min(text.length, shown ? shown + EXPAND_CHARS : TEXT_CHARS);
    const part = cutAt(text, shown);
    shown = part.length;
    body.data = part + (shown < text.length ? '…' : '');
    more.hidden = shown === text.length;
    more.textContent = `show more (${plural(text.length - shown, 'character')} hidden)`;
  };
  more.addEventListener('click', grow);
  grow();
  return el('span', { class: 'long-text' }, body, suffix, ' ', more);
}

function rowsTable(names, rows) {
  const body = el('tbody');
  const info = el('span', { class: 'rows-shown' });
  const more = el('button', { type: 'button', class: 'more' });
  let shown = 0;
  const grow = () => {
    const to = Math.min(rows.length, shown + RESULT_ROWS);
    for (; shown < to; shown++) body.append(el('tr', {}, names.map((n) => el('td', {}, cellValue(rows[shown][n])))));
    info.textContent = shown < rows.length ? `${count(shown)} of ${plural(rows.length, 'row')} shown ` : `${plural(rows.length, 'row')}`;
    more.hidden = shown === rows.length;
    more.textContent = `show ${count(Math.min(RESULT_ROWS, rows.length - shown))} more`;
  };
  more.addEventListener('click', grow);
  grow();
  return el('div', { class: 'result-rows' },
    el('table', {}, el('thead', {}, el('tr', {}, names.map((n) => el('th', { text: n })))), body), el('div', { class: 'rows-footer' }, info, more));
}
