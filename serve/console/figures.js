// serve/console/figures.js — the console's live figures from two polls of GET /metrics:
// rates of counters, an honest bound on the p99 event latency, memory. Pure functions of the
// samples (no DOM, no requests), so a test can feed them histograms; console.js shows them.

// Below this many bytes of rows, the store's fixed structure (a few KiB of nodes and pools per
// list) dominates and "memory per state byte" would read 11-89 on a state of a few rows; the
// figure shows bytes instead until the rows are this big.
export const RATIO_FROM_BYTES = 1 << 20;

export function parseMetrics(text) {
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

export function sum(samples, name, where) {
  let total = null;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (where && Object.entries(where).some(([k, v]) => s.labels[k] !== v)) continue;
    total = (total || 0) + s.value;
  }
  return total;
}

// The 0.99 quantile of a histogram, as an upper bound that holds: {bound, over, events} in seconds.
// The buckets are coarse (250 ms to 1 s is one), so interpolating inside one says little: a single
// 311 ms event "interpolated" to 992 ms. What the histogram does prove: the p99 event (the k-th
// fastest of n, k = ceil(0.99 n)) lies in its bucket (lower, upper], and, from the sum of all the
// durations, v <= (sum - what the other events take at least) / m, where m counts the events of
// its bucket ranked at or above it (each takes at least v) and every other event takes at least
// its bucket's lower bound. The bound is the smaller of the two; for one event it is its time.
// over: the p99 is beyond the last finite bound (only "> over" is known).
export function p99Bound(buckets, total) {
  const n = buckets.length ? buckets[buckets.length - 1][1] : 0;
  if (!n) return null;
  const k = Math.ceil(0.99 * n);
  let b = 0;
  while (buckets[b][1] < k) b++;
  const lowerOf = (j) => (j ? buckets[j - 1][0] : 0);
  const countOf = (j) => buckets[j][1] - (j ? buckets[j - 1][1] : 0);
  const lower = lowerOf(b), upper = buckets[b][0];
  if (upper === Infinity) return { over: lower, events: n };
  let others = 0;
  for (let j = 0; j < buckets.length; j++) if (j !== b) others += countOf(j) * lowerOf(j);
  const below = k - 1 - (b ? buckets[b - 1][1] : 0);  // in the p99's bucket, ranked under it
  const m = buckets[b][1] - k + 1;
  const fromSum = total === null ? Infinity : (total - others - below * lower) / m;
  // the counters are read one by one while events land: a sum that lags its buckets could give
  // a bound under the bucket's own floor, which cannot be; the bucket bound holds regardless
  return { bound: fromSum > lower && fromSum < upper ? fromSum : upper, events: n };
}

// A histogram's cumulative buckets [[le, count]] and sum; the difference from an earlier poll
// when events came between them (window: the last poll), else since the server started.
function histogram(samples, prevSamples, name, pollMs) {
  const read = (ss) => ({
    buckets: ss.filter((s) => s.name === `${name}_bucket`).map((s) => [s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value]),
    total: sum(ss, `${name}_sum`),
  });
  const now = read(samples);
  if (prevSamples) {
    const before = read(prevSamples);
    if (before.buckets.length === now.buckets.length && now.buckets.length) {
      const buckets = now.buckets.map(([le, v], k) => [le, v - before.buckets[k][1]]);
      const events = buckets[buckets.length - 1][1];
      if (events > 0 && buckets.every(([, v]) => v >= 0))  // a restarted server's counters went back
        return { buckets, total: now.total === null || before.total === null ? null : now.total - before.total, window: `last ${pollMs / 1000} s` };
    }
  }
  return { ...now, window: 'since start' };
}

// Seconds as text; up: round up (a bound must not read lower than it is)
export function fmtSeconds(s, up = false) {
  const [scale, unit, digits] = s < 1e-3 ? [1e6, 'µs', 0] : s < 1 ? [1e3, 'ms', s < 0.01 ? 2 : 1] : [1, 's', 2];
  const f = 10 ** digits;
  const x = s * scale * f;
  return `${((up ? Math.ceil(x - 1e-9) : Math.round(x)) / f).toFixed(digits)} ${unit}`;
}

export function fmtBytes(b) {
  if (b === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
  return `${u ? b.toFixed(1) : b} ${units[u]}`;
}
const fmtRate = (r) => (r === null ? '—' : r >= 100 ? r.toFixed(0) : r.toFixed(1));
const fmtMaybe = (v) => (v === null ? '—' : String(v));

// The figures for one module from this poll and the one before (each {at: ms, samples}; before
// may be null): [id, label, value, note] each.
export function figures(now, before, module, pollMs) {
  const samples = now.samples;
  const mod = { module };
  const dt = before ? (now.at - before.at) / 1000 : 0;
  // a counter's rate over the last poll; null when the counter does not exist
  const rate = (name, where) => {
    const v = sum(samples, name, where);
    if (v === null) return null;
    if (!before || dt <= 0) return undefined;  // exists, rate known after the next poll
    const was = sum(before.samples, name, where);
    return was === null ? undefined : Math.max(0, v - was) / dt;
  };
  const shownRate = (x) => (x === null ? '—' : x === undefined ? '…' : fmtRate(x));
  const events = rate('pure_events_total', { ...mod, outcome: 'committed' });
  const failed = rate('pure_events_total', { ...mod, outcome: 'failed' });
  // pure_requests_total leaves out pairs never seen: none is 0
  const queries = sum(samples, 'pure_requests_total', { route: 'query' }) || 0;
  const queriesBefore = before ? sum(before.samples, 'pure_requests_total', { route: 'query' }) || 0 : null;
  const h = histogram(samples, before && before.samples, 'pure_event_seconds', pollMs);
  const p99 = p99Bound(h.buckets, h.total);
  const latency = !h.buckets.length ? ['—', 'not measured'] : !p99 ? ['—', 'no events yet']
    : [p99.over !== undefined ? `> ${fmtSeconds(p99.over)}` : `≤ ${fmtSeconds(p99.bound, true)}`,
      `${h.window}, ${p99.events} event${p99.events === 1 ? '' : 's'}`];
  const bursts = rate('pure_log_bursts_total', mod);
  const held = sum(samples, 'pure_snapshots_held', mod);
  const stateBytes = sum(samples, 'pure_state_bytes', mod), structure = sum(samples, 'pure_structure_bytes', mod) || 0;
  const memory = stateBytes === null ? ['memory / state byte', '—', 'not measured']
    : stateBytes >= RATIO_FROM_BYTES ? ['memory / state byte', ((stateBytes + structure) / stateBytes).toFixed(2), `${fmtBytes(stateBytes)} of rows`]
    : ['store memory', fmtBytes(stateBytes + structure), `${fmtBytes(stateBytes)} of rows`];
  return [
    ['events-rate', 'events/s', shownRate(events), failed ? `${fmtRate(failed)}/s failed` : 'committed'],
    ['event-p99', 'p99 event latency', ...latency],
    ['queries-rate', 'queries/s', queriesBefore === null || dt <= 0 ? '…' : fmtRate(Math.max(0, queries - queriesBefore) / dt), 'all modules'],
    ['log-bursts', 'log bursts/s', shownRate(bursts), bursts === null ? 'no log in this build' : 'group commits'],
    ['snapshots-held', 'snapshots held', held === null ? '—' : String(held), held === null ? 'not measured' : 'by readers'],
    ['store-memory', ...memory],
    ['queue', 'queued events', fmtMaybe(sum(samples, 'pure_queue_events', mod)), `seq ${fmtMaybe(sum(samples, 'pure_visible_sequence', mod))} visible`],
    ['resident', 'resident memory', fmtBytes(sum(samples, 'pure_resident_bytes')), `${fmtMaybe(sum(samples, 'pure_connections'))} connections`],
  ];
}
