"""tests/console/page_checks.py — checks the console's browser test runs inside the page, as
scripts for webdriver.Browser.run: the contrast of every text the page shows against what is
behind it (WCAG 2 AA: 4.5:1), and the accessible names and links of its form fields."""

# Each element with text of its own (and ::before content such as line numbers, and placeholders
# of empty inputs), visible and not a disabled control (WCAG exempts inactive controls): its
# colour, made partly transparent by its and its ancestors' opacity, over the backgrounds behind
# it composed from the nearest opaque one up. While a modal dialog is open, only it counts (the
# page behind is inert). Returns the failures as text, with the ratio.
CONTRAST = r"""
const parse = (c) => {
  const m = /rgba?\(([^)]*)\)/.exec(c);
  if (!m) return null;
  const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
};
const over = (top, bottom) => [0, 1, 2].map((k) => top[k] * top[3] + bottom[k] * (1 - top[3])).concat([1]);
const lum = (c) => {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
};
const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
function background(e) {
  const layers = [];
  for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
    const c = parse(getComputedStyle(n).backgroundColor);
    if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  let bg = [255, 255, 255, 1];
  for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
  return bg;
}
function opacity(e) {
  let o = 1;
  for (let n = e; n && n.nodeType === 1; n = n.parentElement) o *= Number(getComputedStyle(n).opacity);
  return o;
}
const name = (e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : ''}`;
const failures = [];
let checked = 0;
function check(e, color, what) {
  const bg = background(e);
  const fg = parse(color);
  const shown = over([fg[0], fg[1], fg[2], fg[3] * opacity(e)], bg);
  const r = ratio(shown, bg);
  checked++;
  if (r < 4.5) failures.push(`${what} ${JSON.stringify((e.textContent || e.placeholder || '').trim().slice(0, 30))}: ${color} on rgb(${bg.slice(0, 3).map(Math.round)}) is ${r.toFixed(2)}:1`);
}
const modal = document.querySelector('dialog[open]');
for (const e of (modal || document.body).querySelectorAll('*')) {
  if (!e.getClientRects().length || getComputedStyle(e).visibility === 'hidden' || e.closest(':disabled')) continue;
  if ([...e.childNodes].some((n) => n.nodeType === 3 && n.data.trim())) check(e, getComputedStyle(e).color, name(e));
  const before = getComputedStyle(e, '::before');
  if (before.content && before.content !== 'none' && before.content !== 'normal') check(e, before.color, name(e) + '::before');
  if (e.tagName === 'SELECT' || (e.tagName === 'INPUT' && e.type !== 'checkbox' && e.value)) check(e, getComputedStyle(e).color, name(e));
  if (e.tagName === 'INPUT' && e.placeholder && !e.value) check(e, getComputedStyle(e, '::placeholder').color, name(e) + '::placeholder');
}
return [checked, failures];
"""

# Every form field of the module page: its id (unique in the page), the label that names it
# (label for=id), its name; and for a field marked invalid, aria-invalid and the note that
# aria-describedby names. Returns problems as text.
FIELDS = r"""
const problems = [];
const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
const seen = new Set();
for (const id of ids) { if (seen.has(id)) problems.push(`id ${id} is used twice`); seen.add(id); }
for (const label of document.querySelectorAll('label[for]'))
  if (!document.getElementById(label.htmlFor)) problems.push(`label for=${label.htmlFor} names no element`);
for (const input of document.querySelectorAll('#module form.call input')) {
  if (!input.id) { problems.push(`${input.name}: no id`); continue; }
  if (!input.name) problems.push(`${input.id}: no name`);
  if (!document.querySelector(`label[for="${CSS.escape(input.id)}"]`)) problems.push(`${input.id}: no label for it`);
  const invalid = input.classList.contains('invalid');
  if (invalid !== (input.getAttribute('aria-invalid') === 'true')) problems.push(`${input.id}: aria-invalid ${input.getAttribute('aria-invalid')} but invalid ${invalid}`);
  if (invalid) {
    const note = document.getElementById(input.getAttribute('aria-describedby') || '');
    if (!note || note.hidden || !note.textContent) problems.push(`${input.id}: aria-describedby names no shown note`);
  }
}
return problems;
"""
