// ferry's status page: polls /api/status once a second (only the new samples after the first
// answer) and draws every pipeline with plain DOM and inline SVG. No library, no build step.
// Text from the server is always set with textContent, never parsed as HTML.
'use strict';

const POLL_MS = 1000;
const state = {history: null, pipelines: new Map(), paused: false, timer: null, failures: 0};

// ---- formatting ----
const nf = new Intl.NumberFormat('en-US', {maximumFractionDigits: 0});
function num(v) { return v === null || v === undefined ? '–' : nf.format(v); }
function dec(v, digits = 2) {
  if (v === null || v === undefined) return '–';
  return Number(v).toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: 0});
}
// Three significant digits below 10 (0.00123, 1.23), fewer above.
function sig(v) {
  if (v === null || v === undefined) return '–';
  if (v === 0 || Math.abs(v) >= 100) return dec(v, 0);
  if (Math.abs(v) >= 10) return dec(v, 1);
  return Number(v.toPrecision(3)).toLocaleString('en-US', {maximumSignificantDigits: 3});
}
function bytes(v) {
  if (v === null || v === undefined) return '–';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return `${dec(v, i === 0 ? 0 : 1)} ${units[i]}`;
}
// A data rate given in MB/s (10^6 bytes a second, as /api/status reports it) in the unit that fits
// it, three significant digits: 0.0014 MB/s reads "1.4 kB/s", 1500 MB/s "1.5 GB/s".
function byteRate(mbPerS) {
  if (mbPerS === null || mbPerS === undefined) return '–';
  const units = ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s'];
  let v = mbPerS * 1e6, i = 0;
  while (Math.abs(v) >= 999.5 && i < units.length - 1) { v /= 1000; i++; }
  return `${sig(v)} ${units[i]}`;
}
function seconds(v) {
  if (v === null || v === undefined) return '–';
  if (v < 1) return `${dec(v * 1000, 0)} ms`;
  if (v < 120) return `${dec(v, 1)} s`;
  if (v < 7200) return `${dec(v / 60, 0)} min`;
  if (v < 172800) return `${dec(v / 3600, 1)} h`;
  return `${dec(v / 86400, 1)} d`;
}
function ago(ms, now) {
  if (ms === null || ms === undefined) return 'never';
  return `${seconds(Math.max(0, (now - ms) / 1000))} ago`;
}
function iso(ms) { return ms ? new Date(ms).toISOString() : ''; }
const STATE_TEXT = {
  running: 'running', catching_up: 'catching up', starting: 'starting',
  waiting_for_broker: 'waiting for the broker', waiting_for_registry: 'waiting for the schema registry',
  retrying: 'retrying a commit', failed: 'failed', stopped: 'stopped',
};

// ---- DOM helpers ----
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
const SVG = 'http' + '://www.w3.org/2000/svg';  // the SVG namespace name, not a URL fetched
function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// A line chart of `values` (nulls are gaps), newest at the right edge, over the samples kept (the
// last 15 minutes), or the last minute while fewer are kept.
function chart(values, label, format, cls = 'chart') {
  const w = 300, h = 48, cap = Math.max(values.length, 60);
  const finite = values.filter((v) => v !== null);
  const max = Math.max(1e-9, ...finite);
  const last = finite.length ? finite[finite.length - 1] : null;
  const s = svg('svg', {class: cls, viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: 'none',
                        role: 'img', 'aria-label': `${label}: now ${format(last)}, peak ${format(finite.length ? max : null)}`});
  s.append(svg('line', {class: 'axis', x1: 0, y1: h - 0.5, x2: w, y2: h - 0.5}));
  const x0 = cap - values.length;
  let path = '', area = '', open = false, startX = 0, lastX = 0;
  values.forEach((v, i) => {
    const x = ((x0 + i) / Math.max(1, cap - 1)) * w;
    if (v === null) {
      if (open) area += `L${lastX.toFixed(1)},${h}L${startX.toFixed(1)},${h}Z`;
      open = false;
      return;
    }
    const y = h - 2 - (v / max) * (h - 4);
    path += `${open ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`;
    area += `${open ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`;
    if (!open) startX = x;
    open = true;
    lastX = x;
  });
  if (open) area += `L${lastX.toFixed(1)},${h}L${startX.toFixed(1)},${h}Z`;
  if (area) s.append(svg('path', {class: 'area', d: area}));
  if (path) s.append(svg('path', {class: 'line', d: path}));
  const title = svg('title');
  title.textContent = s.getAttribute('aria-label');
  s.append(title);
  return s;
}

function card(title, big, sub, graph) {
  return el('div', {class: 'card', 'data-card': title}, el('h3', {text: title}), el('div', {class: 'big num', text: big}),
            sub ? el('div', {class: 'sub', text: sub}) : null, graph);
}

function table(headers, rows, numeric = []) {
  const head = el('tr', {}, ...headers.map((h, i) => el('th', {scope: 'col', class: numeric.includes(i) ? 'num' : null, text: h})));
  const body = el('tbody');
  for (const r of rows) body.append(r);
  return el('div', {class: 'scroll'}, el('table', {}, el('thead', {}, head), body));
}
function cell(text, attrs = {}) { return el('td', {...attrs, text}); }

// ---- merging the polled answers ----
function merge(answer) {
  const h = answer.history;
  const continues = state.history && h.first_tick === state.history.next_tick;
  const keep = (old, add) => {
    const all = continues ? old.concat(add) : add;
    return all.slice(Math.max(0, all.length - h.capacity));
  };
  const seen = new Set();
  for (const p of answer.pipelines) {
    seen.add(p.id);
    const old = state.pipelines.get(p.id);
    if (old && continues) {
      for (const k of Object.keys(p.series)) p.series[k] = keep(old.series[k] || [], p.series[k]);
      const oldParts = new Map(old.partitions.map((x) => [x.key, x]));
      for (const part of p.partitions) {
        const o = oldParts.get(part.key);
        for (const k of Object.keys(part.series)) {
          // A partition new since the last answer is padded to the pipeline's window.
          part.series[k] = o ? keep(o.series[k], part.series[k])
                             : Array(Math.max(0, p.series.rows_per_s.length - part.series[k].length)).fill(null).concat(part.series[k]);
        }
      }
    }
    state.pipelines.set(p.id, p);
  }
  for (const id of [...state.pipelines.keys()]) if (!seen.has(id)) state.pipelines.delete(id);
  const times = continues ? state.history.times_ms.concat(h.times_ms) : h.times_ms;
  state.history = {...h, first_tick: continues ? state.history.first_tick : h.first_tick,
                   times_ms: times.slice(Math.max(0, times.length - h.capacity))};
  state.now = answer.now_ms;
  state.version = answer.ferry_version;
}

// ---- drawing ----
function pipelineSection(p) {
  let sec = document.getElementById(`pipeline-${p.id}`);
  if (!sec) {
    sec = el('section', {class: 'pipeline', id: `pipeline-${p.id}`, 'data-pipeline': p.id, 'aria-labelledby': `title-${p.id}`});
    const blocks = {};
    for (const [key, title] of [['partitions', 'Partitions'], ['leases', 'Partition leases'], ['commits', 'Last commits'],
                                ['bad', 'Bad records'], ['events', 'Fencing and maintenance'],
                                ['table', 'Table'], ['tables', 'Routed tables']]) {
      blocks[key] = el('div', {class: 'block'});
      sec.append(el('details', {open: key !== 'events', 'data-block': key}, el('summary', {text: title}), blocks[key]));
    }
    sec.prepend(el('div', {class: 'live'}));
    document.getElementById('pipelines').append(sec);
  }
  return sec;
}

function drawPipeline(p, now) {
  const sec = pipelineSection(p);
  const live = sec.querySelector('.live');
  const stateEl = el('span', {class: `state ${p.state}`, 'data-field': 'state', text: STATE_TEXT[p.state] || p.state});
  const head = el('header', {}, el('h2', {id: `title-${p.id}`, text: p.id}), stateEl,
                  el('span', {class: 'muted', title: iso(p.state_since_ms), text: p.state_since_ms ? `since ${ago(p.state_since_ms, now)}` : ''}));
  const where = el('p', {class: 'where'}, `${p.source} → `, el('code', {text: p.table_uri}));
  const parts = [head, where];
  if (p.error && (p.state === 'failed' || p.state === 'retrying' || p.state === 'waiting_for_broker' ||
      p.state === 'waiting_for_registry')) {
    parts.push(el('div', {class: `error${p.state === 'failed' ? '' : ' recovering'}`, role: 'alert', 'data-field': 'error',
                          text: `${p.state === 'failed' ? 'Failed' : 'Last error'} ${ago(p.error_ms, now)}: ${p.error}`}));
  }
  const s = p.series;
  parts.push(el('div', {class: 'cards'},
    card('Rows/s committed', num(p.now.rows_per_s), `${num(p.totals.rows)} rows in all`, chart(s.rows_per_s, 'rows per second', num)),
    card('Data committed', byteRate(p.now.mb_per_s), `${bytes(p.totals.bytes)} in all`, chart(s.mb_per_s, 'bytes per second', byteRate)),
    card('Messages/s in', num(p.now.messages_per_s), `${num(p.totals.messages)} taken from the source`, chart(s.messages_per_s, 'messages per second', num)),
    card('Batch duration', seconds(last(s.batch_seconds)), 'first row to durable commit', chart(s.batch_seconds, 'batch duration', seconds)),
    card('Commit duration', seconds(last(s.commit_seconds)), `${num(p.totals.commits)} commits, ${num(p.totals.commits_failed)} retried, ${num(p.totals.commits_lost)} lost`, chart(s.commit_seconds, 'commit duration', seconds))));
  live.replaceChildren(...parts);

  const block = (k) => sec.querySelector(`[data-block="${k}"] > .block`);
  // Partitions.
  const prow = p.partitions.map((x) => el('tr', {'data-partition': x.key},
    cell(x.key, {class: 'mono'}), cell(num(x.committed), {class: 'num', 'data-field': 'committed'}),
    cell(num(x.head), {class: 'num', 'data-field': 'head'}),
    cell(num(x.lag_messages), {class: `num${x.lag_messages > 0 ? ' lagging' : ''}`, 'data-field': 'lag_messages'}),
    cell(seconds(x.lag_seconds), {class: 'num', 'data-field': 'lag_seconds'}),
    cell(num(x.rate_limit_pauses), {class: 'num', 'data-field': 'rate_limit_pauses'}),
    el('td', {}, chart(x.series.lag_messages, `lag of ${x.key} in messages`, num, 'chart spark'))));
  block('partitions').replaceChildren(p.partitions.length
    ? table(['Partition', 'Committed', 'Broker head', 'Lag (messages)', 'Lag (time)', 'Rate-limit pauses', 'Lag, 15 min'], prow, [1, 2, 3, 4, 5])
    : el('p', {class: 'empty', text: 'No partition assigned yet.'}));
  // Elastic JetStream: who holds each partition's lease, since when, and the lag of this process's.
  const leasesBlock = block('leases');
  leasesBlock.closest('details').hidden = p.leases.length === 0;
  const lrow = p.leases.map((x) => el('tr', {'data-lease': x.partition, class: x.mine ? 'mine' : ''},
    cell(x.partition, {class: 'mono'}),
    cell(x.owner === null ? 'free' : `${x.owner}${x.mine ? ' (this process)' : ''}`, {class: 'mono', 'data-field': 'owner'}),
    cell(x.lease_age_ms === null ? '–' : seconds(x.lease_age_ms / 1000), {class: 'num', 'data-field': 'lease_age_ms'}),
    cell(x.renewed_ms === null ? '–' : ago(x.renewed_ms, now), {title: iso(x.renewed_ms), class: 'nowrap'}),
    cell(num(x.lag_messages), {class: `num${x.lag_messages > 0 ? ' lagging' : ''}`, 'data-field': 'lag_messages'})));
  leasesBlock.replaceChildren(p.leases.length
    ? table(['Partition', 'Owner', 'Lease age', 'Renewed', 'Lag (messages)'], lrow, [2, 4])
    : el('p', {class: 'empty', text: 'Not an elastic pipeline.'}));
  // Commits.
  block('commits').replaceChildren(commitsTable(p.commits, now));
  // Bad records.
  const b = p.bad_records;
  const reasons = b.by_reason.map((r) => el('tr', {}, cell(r.reason), cell(r.action), cell(num(r.count), {class: 'num'})));
  const samples = b.samples.map((x) => el('tr', {},
    cell(ago(x.time_ms, now), {title: iso(x.time_ms), class: 'nowrap'}), cell(`${x.partition} @ ${x.position}`, {class: 'mono nowrap'}),
    cell(x.reason), cell(x.error, {class: 'mono wide'}),
    ...('payload' in x ? [cell(x.payload, {class: 'mono'})] : [])));
  const sampleHead = ['When', 'Position', 'Reason', 'Error'];
  if (b.samples.some((x) => 'payload' in x)) sampleHead.push('Payload');
  const drow = p.dropped_fields.map((d) => el('tr', {}, cell(ago(d.time_ms, now), {title: iso(d.time_ms), class: 'nowrap'}),
    cell(d.field, {class: 'mono'}), cell(d.writer), cell(num(d.messages), {class: 'num'})));
  block('bad').replaceChildren(...(b.by_reason.length
    ? [table(['Reason', 'Action', 'Count'], reasons, [2]), el('p', {class: 'muted', text: 'Last samples (payloads are shown only when [metrics] show_payloads = true):'}),
       table(sampleHead, samples)]
    : [el('p', {class: 'empty', text: 'No bad record.'})]),
    el('h3', {text: `Dropped writer fields (${p.dropped_fields.length})`}),
    p.dropped_fields.length ? table(['First dropped', 'Field', 'Writer schema', 'Messages'], drow, [3])
      : el('p', {class: 'empty', text: 'None: the table has a place for every writer field.'}));
  // Fences and maintenance.
  const frow = p.fences.map((f) => el('tr', {}, cell(ago(f.time_ms, now), {title: iso(f.time_ms)}), cell(num(f.rows_dropped), {class: 'num'}), cell(f.reason, {class: 'mono'})));
  const mrow = p.maintenance.map((m) => el('tr', {}, cell(ago(m.time_ms, now), {title: iso(m.time_ms)}), cell(m.operation), cell(m.outcome), cell(seconds(m.seconds), {class: 'num'}), cell(m.detail)));
  block('events').replaceChildren(
    el('h3', {text: `Fencing events (${p.fences.length})`}),
    p.fences.length ? table(['When', 'Rows dropped', 'Why'], frow, [1]) : el('p', {class: 'empty', text: 'None: no other writer took a partition.'}),
    el('h3', {text: `Maintenance runs (${p.maintenance.length})`}),
    p.maintenance.length ? table(['When', 'Operation', 'Outcome', 'Took', 'What'], mrow, [3]) : el('p', {class: 'empty', text: 'None scheduled or run yet ([pipeline.maintenance]).'}));
  // Table.
  block('table').replaceChildren(tableFigures(p.table, now));
  // A routed pipeline's tables, each with its own state, commits and figures.
  const tablesBlock = block('tables');
  tablesBlock.closest('details').hidden = p.tables.length === 0;
  tablesBlock.replaceChildren(...p.tables.map((t) => {
    const open = tablesBlock.querySelector(`details[data-table="${CSS.escape(t.table_uri)}"]`);
    const parts = [el('summary', {}, el('code', {text: t.table_uri}), ' ',
                      el('span', {class: `state ${t.state}`, 'data-field': 'state', text: STATE_TEXT[t.state] || t.state}))];
    if (t.error && t.state !== 'running' && t.state !== 'stopped') {
      parts.push(el('div', {class: `error${t.state === 'failed' ? '' : ' recovering'}`, 'data-field': 'error',
                            text: `${t.state === 'failed' ? 'Failed' : 'Last error'} ${ago(t.error_ms, now)}: ${t.error}`}));
    }
    const bad = t.bad_records.by_reason.map((r) => `${num(r.count)} ${r.reason} (${r.action})`).join(', ');
    parts.push(el('h3', {text: 'Last commits'}), commitsTable(t.commits, now),
               el('p', {class: 'muted', text: `Bad records: ${bad || 'none'}. Fencing events: ${t.fences.length}. Maintenance runs: ${t.maintenance.length}.`}),
               el('h3', {text: 'Table'}), tableFigures(t.table, now));
    return el('details', {'data-table': t.table_uri, open: open ? open.open : true}, ...parts);
  }));
}
function commitsTable(commits, now) {
  const crow = commits.map((c) => el('tr', {},
    cell(num(c.version), {class: 'num'}), cell(ago(c.time_ms, now), {title: iso(c.time_ms), class: 'nowrap'}),
    cell(num(c.rows), {class: 'num'}), cell(num(c.files), {class: 'num'}), cell(bytes(c.bytes), {class: 'num'}),
    cell(seconds(c.commit_seconds), {class: 'num'}), cell(seconds(c.batch_seconds), {class: 'num'}),
    cell(c.positions.map((x) => `${x.partition} ${x.first}..${x.last}`).join(', '), {class: 'mono'})));
  return commits.length
    ? table(['Version', 'When', 'Rows', 'Files', 'Bytes', 'Commit', 'Batch', 'Positions'], crow, [0, 2, 3, 4, 5, 6])
    : el('p', {class: 'empty', text: 'No commit by this process yet.'});
}
function tableFigures(t, now) {
  const trow = (k, v, title) => el('tr', {}, el('th', {scope: 'row', text: k}), cell(v, {class: 'num', title}));
  return table(['', ''], [
    trow('Version', num(t.version)), trow('Size', bytes(t.size_bytes)), trow('Files', num(t.files)),
    trow(`Small files (< ${bytes(t.small_file_bytes)})`, num(t.small_files)),
    trow('Last optimize', t.optimize_ms ? `${ago(t.optimize_ms, now)} (version ${t.optimize_version})` : 'none in the recent log', iso(t.optimize_ms)),
    trow('Last checkpoint', t.checkpoint_version === null ? 'none' : `${t.checkpoint_ms ? ago(t.checkpoint_ms, now) : 'time unknown'} (version ${t.checkpoint_version})`, iso(t.checkpoint_ms)),
  ], [1]);
}
function last(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i];
  return null;
}

function draw() {
  const now = state.now;
  const list = [...state.pipelines.values()];
  const failed = list.filter((p) => p.state === 'failed').length;
  const lagging = list.filter((p) => p.state === 'catching_up').length;
  document.getElementById('version').textContent = state.version || '';
  document.getElementById('summary').textContent =
    `${list.length} pipeline${list.length === 1 ? '' : 's'}: ${list.length - failed - lagging} up to date or idle, ${lagging} catching up, ${failed} failed. Updated ${new Date(now).toLocaleTimeString()}.`;
  for (const p of list) drawPipeline(p, now);
  for (const sec of document.querySelectorAll('section.pipeline')) {
    if (!state.pipelines.has(sec.dataset.pipeline)) sec.remove();
  }
}

// ---- polling ----
async function poll() {
  state.timer = null;
  if (state.paused) return;
  const since = state.history ? `?since=${state.history.next_tick}` : '';
  try {
    const res = await fetch(`api/status${since}`, {cache: 'no-store'});
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    merge(await res.json());
    draw();
    state.failures = 0;
    document.getElementById('offline').hidden = true;
  } catch (e) {
    state.failures++;
    const banner = document.getElementById('offline');
    banner.textContent = `ferry does not answer (${e.message}); the figures below are from ${state.now ? new Date(state.now).toLocaleTimeString() : 'nowhere yet'}. Retrying.`;
    banner.hidden = false;
  }
  schedule();
}
function schedule() {
  if (!state.paused && state.timer === null) state.timer = setTimeout(poll, POLL_MS);
}

// ---- controls ----
const THEMES = ['system', 'light', 'dark'];
function applyTheme(theme) {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  document.getElementById('theme').textContent = `Theme: ${theme}`;
  try { localStorage.setItem('ferry-theme', theme); } catch (e) { /* private mode */ }
}
function nextTheme() {
  const cur = document.documentElement.dataset.theme || 'system';
  applyTheme(THEMES[(THEMES.indexOf(cur) + 1) % THEMES.length]);
}
function togglePause() {
  state.paused = !state.paused;
  const b = document.getElementById('pause');
  b.setAttribute('aria-pressed', String(state.paused));
  b.textContent = state.paused ? 'Resume' : 'Pause';
  if (state.paused) { clearTimeout(state.timer); state.timer = null; } else poll();
}

document.addEventListener('DOMContentLoaded', () => {
  let saved = 'system';
  try { saved = localStorage.getItem('ferry-theme') || 'system'; } catch (e) { /* private mode */ }
  applyTheme(THEMES.includes(saved) ? saved : 'system');
  document.getElementById('theme').addEventListener('click', nextTheme);
  document.getElementById('pause').addEventListener('click', togglePause);
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName)) return;
    if (e.key === 't') nextTheme();
    if (e.key === 'p') togglePause();
  });
  poll();
});
