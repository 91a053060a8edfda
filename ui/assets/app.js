// git mem ui. Every piece of the memory is untrusted text (a transcript can
// hold <script>): the DOM is built with createElement and text nodes only,
// never innerHTML, and links are made from encoded commit ids.
'use strict';

const $ = (sel) => document.querySelector(sel);
const SVGNS = 'http://www.w3.org/2000/svg';
const FILTERS = ['project', 'agent', 'room', 'file', 'session', 'since', 'until'];

// el builds an element; strings among kids become text nodes.
function el(tag, attrs, ...kids) {
  return build(document.createElement(tag), attrs, kids);
}
function sv(tag, attrs, ...kids) {
  return build(document.createElementNS(SVGNS, tag), attrs, kids);
}
function build(n, attrs, kids) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') n.setAttribute('class', v);
    else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, String(v));
  }
  for (const c of kids.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}
function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); return n; }

const state = { facets: null, seq: 0, ctrl: null, timer: 0, sel: -1, last: '' };

// api fetches JSON from the page's own server; the cookie carries the token.
async function api(path, params, signal) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (Array.isArray(v)) v.forEach((x) => x && u.searchParams.append(k, x));
    else if (v !== '' && v !== undefined && v !== null) u.searchParams.set(k, v);
  }
  const r = await fetch(u, { credentials: 'same-origin', headers: { Accept: 'application/json' }, signal });
  let body;
  try { body = await r.json(); } catch (e) { body = { error: 'not JSON (' + r.status + ')' }; }
  if (!r.ok) throw new Error(body.error || ('HTTP ' + r.status));
  return body;
}

function fmtDate(s) { return s ? s.slice(0, 10) : ''; }
function fmtTime(s) { return s ? s.slice(0, 16).replace('T', ' ') : ''; }
function fmtNum(n) { return (n || 0).toLocaleString('en'); }

// ---- routing --------------------------------------------------------------

function route() {
  const h = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = h.split('?');
  const params = new URLSearchParams(qs || '');
  const parts = path.split('/').filter(Boolean);
  const view = parts[0] || 'search';
  document.querySelectorAll('#nav a').forEach((a) => a.classList.toggle('on', a.dataset.view === view || (view === 'x' && a.dataset.view === 'search')));
  state.sel = -1;
  const main = clear($('#main'));
  main.dataset.view = view;
  const show = { search: viewSearch, x: viewExchange, timeline: viewTimeline, palace: viewPalace, files: viewFiles, stats: viewStats }[view];
  if (!show) { main.append(el('p', { class: 'error' }, 'No such view.')); return; }
  // The first stats of a big memory count every exchange's tokens once.
  const wait = el('p', { class: 'muted', id: 'loading' }, view === 'stats' ? 'counting… (the first time reads every exchange)' : 'loading…');
  main.append(wait);
  show(main, params, parts.slice(1).map(decode)).catch((e) => {
    if (e.name !== 'AbortError') main.append(el('p', { class: 'error' }, String(e.message || e)));
  }).finally(() => wait.remove());
}

// decode is decodeURIComponent that leaves a malformed part as it is.
function decode(s) { try { return decodeURIComponent(s); } catch (e) { return s; } }

// filters reads the filter inputs.
function filters() {
  const f = {};
  for (const k of FILTERS) {
    const v = $('#f-' + k).value.trim();
    if (v) f[k] = v;
  }
  return f;
}
function setFilters(params) {
  for (const k of FILTERS) if (params.has(k)) $('#f-' + k).value = params.get(k);
}
function searchHash() {
  const p = new URLSearchParams();
  const q = $('#q').value;
  if (q.trim()) p.set('q', q);
  const m = $('#mode').value;
  if (m && state.facets && m !== state.facets.default_mode) p.set('mode', m);
  for (const [k, v] of Object.entries(filters())) p.set(k, v);
  const s = p.toString();
  return '#/' + (s ? 'search?' + s : '');
}

// ---- cards ----------------------------------------------------------------

function card(e, extra) {
  const href = '#/x/' + encodeURIComponent(e.short);
  return el('a', { class: 'card', href, 'data-commit': e.short },
    el('div', { class: 'meta' },
      el('span', { class: 'short' }, e.short), ' ',
      el('time', { datetime: e.time }, fmtTime(e.time)),
      e.project ? el('span', { class: 'project' }, e.project) : null,
      e.agent ? el('span', { class: 'agent' }, e.agent) : null,
      extra),
    el('p', { class: 'core' }, e.core),
    e.context ? el('p', { class: 'context' }, e.context) : null,
    el('div', { class: 'rooms' }, (e.rooms || []).map((r) => el('span', { class: 'room' }, r))));
}

function cardList(entries, mkExtra) {
  return el('div', { class: 'cards', role: 'list' }, entries.map((e) => card(e, mkExtra && mkExtra(e))));
}

// A list of exchanges under a chart: the newest that match f.
async function listUnder(box, title, f) {
  clear(box).append(el('p', { class: 'muted' }, 'loading…'));
  const ans = await api('/api/log', Object.assign({ n: 100 }, f));
  clear(box).append(el('h2', {}, title, ' ', el('span', { class: 'muted' }, fmtNum(ans.total) + ' exchanges')), cardList(ans.entries));
}

// ---- search ---------------------------------------------------------------

async function viewSearch(main, params) {
  $('#q').value = params.get('q') || '';
  if (params.has('mode')) $('#mode').value = params.get('mode');
  setFilters(params);
  main.append(el('div', { id: 'results' }));
  await runSearch();
}

async function runSearch() {
  const box = $('#results');
  if (!box) return;
  const q = $('#q').value;
  const f = filters();
  if (state.ctrl) state.ctrl.abort();
  state.ctrl = new AbortController();
  const seq = ++state.seq;
  let ans, head;
  if (q.trim()) {
    ans = await api('/api/search', Object.assign({ q, mode: $('#mode').value, k: 30 }, f), state.ctrl.signal);
    head = el('p', { class: 'muted', id: 'summary' }, fmtNum(ans.results.length) + ' results · ' + ans.took_ms.toFixed(1) + ' ms', ans.note ? ' · ' + ans.note : '');
  } else {
    ans = await api('/api/log', Object.assign({ n: 50 }, f), state.ctrl.signal);
    head = el('p', { class: 'muted', id: 'summary' }, 'newest ' + fmtNum(ans.entries.length) + ' of ' + fmtNum(ans.total) + ' exchanges');
  }
  if (seq !== state.seq) return;
  state.sel = -1;
  const list = ans.results || ans.entries;
  clear(box).append(head, list.length ? cardList(list, (e) => e.score !== undefined ? el('span', { class: 'score' }, e.score.toFixed(3)) : null)
    : el('p', { class: 'empty' }, 'No exchange matches (try fewer words, or drop a filter).'));
}

// Search as you type: each key restarts a short wait, then the address
// (and so the history) follows the query without piling up entries.
function onInput() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => {
    const h = searchHash();
    if (!location.hash.startsWith('#/search') && location.hash !== '' && location.hash !== '#/') {
      location.hash = h;
      return;
    }
    history.replaceState(null, '', h);
    runSearch().catch((e) => {
      if (e.name !== 'AbortError') clear($('#results')).append(el('p', { class: 'error' }, e.message));
    });
  }, 150);
}

// ---- the exchange ---------------------------------------------------------

// formatted renders text with ``` fences as <pre> and `x` as <code>.
function formatted(text) {
  const out = el('div', { class: 'text' });
  const re = /```([^\n`]*)\n([\s\S]*?)```/g;
  let at = 0, m;
  const prose = (s) => {
    for (const para of s.split(/\n{2,}/)) {
      if (!para.trim()) continue;
      const p = el('p');
      const bits = para.split(/(`[^`\n]+`)/);
      for (const b of bits) {
        if (b.length > 2 && b.startsWith('`') && b.endsWith('`')) p.append(el('code', {}, b.slice(1, -1)));
        else if (b) p.append(document.createTextNode(b));
      }
      out.append(p);
    }
  };
  while ((m = re.exec(text)) !== null) {
    prose(text.slice(at, m.index));
    out.append(el('pre', { class: 'code', 'data-lang': m[1].trim() || null }, el('code', {}, m[2])));
    at = re.lastIndex;
  }
  prose(text.slice(at));
  return out;
}

function toolSummary(t) {
  let what = '';
  try {
    const inp = t.input ? JSON.parse(t.input) : null;
    if (inp && typeof inp === 'object') {
      what = inp.file_path || inp.path || inp.command || inp.pattern || inp.url || inp.query || '';
      if (typeof what !== 'string') what = '';
    }
  } catch (e) { /* the input is shown below as it is */ }
  const lines = t.text ? t.text.split('\n').length : 0;
  return [el('span', { class: 'tool-name' }, t.name || 'tool'), what ? el('span', { class: 'tool-what' }, what.slice(0, 120)) : null,
    el('span', { class: 'muted' }, lines + (lines === 1 ? ' line' : ' lines') + (t.truncated ? ' (cut; ' + fmtNum(t.truncated) + ' bytes in all)' : ''))];
}

function turnView(t) {
  if (t.role === 'tool') {
    return el('details', { class: 'turn tool' },
      el('summary', {}, toolSummary(t)),
      t.input ? el('pre', { class: 'tool-input' }, t.input) : null,
      el('pre', { class: 'tool-output' }, t.text || ''),
      t.truncated ? el('p', { class: 'muted' }, 'The output is cut here; the command on the right prints it all.') : null);
  }
  return el('section', { class: 'turn role-' + t.role },
    el('h3', {}, t.role, t.speaker ? ' (' + t.speaker + ')' : ''),
    formatted(t.text || ''));
}

async function viewExchange(main, params, parts) {
  const ans = await api('/api/exchange', { ref: parts[0] || '' });
  const e = ans.entry;
  const cmd = el('code', { id: 'show-cmd' }, ans.show);
  const copy = el('button', { type: 'button', id: 'copy', onclick: () => copyText(ans.show, copy) }, 'Copy');
  const tr = (k, v) => v === undefined || v === '' || v === null || (Array.isArray(v) && !v.length) ? null
    : el('tr', {}, el('th', {}, k), el('td', {}, Array.isArray(v) ? v.map((x) => el('div', {}, x)) : String(v)));
  const nav = el('div', { class: 'neighbours' },
    ans.prev ? el('a', { href: '#/x/' + encodeURIComponent(ans.prev), id: 'prev', class: 'button' }, '← earlier') : null,
    ans.next ? el('a', { href: '#/x/' + encodeURIComponent(ans.next), id: 'next', class: 'button' }, 'later →') : null);
  const sess = el('ol', { class: 'session' }, ans.session.map((x) =>
    el('li', { class: x.commit === e.commit ? 'current' : null },
      el('a', { href: '#/x/' + encodeURIComponent(x.short) }, el('span', { class: 'short' }, x.short), ' ', x.core))));
  // Forget, with the command's confirmation: type the short commit id.
  const forget = state.facets && state.facets.forget ? el('div', { class: 'forget' },
    el('button', { type: 'button', id: 'forget', onclick: () => forgetExchange(e, forget) }, 'Forget…')) : null;
  const aside = el('aside', { class: 'cardbox' },
    el('p', { class: 'core' }, e.core),
    e.context ? el('p', { class: 'context' }, e.context) : null,
    el('div', { class: 'rooms' }, e.rooms.map((r) => el('a', { class: 'room', href: '#/search?room=' + encodeURIComponent(r) }, r))),
    el('table', { class: 'trailers' }, el('tbody', {},
      tr('Commit', e.commit), tr('Time', fmtTime(e.time)), tr('Exchange', e.exchange), tr('Session', e.session),
      tr('Project', e.project), tr('Agent', e.agent), tr('File', e.files), tr('Distiller', e.distiller), tr('Redacted', e.redacted))),
    el('div', { class: 'cmd' }, cmd, copy),
    el('h3', {}, 'Session'), nav, sess, forget);
  main.append(el('div', { class: 'exchange' },
    el('div', { class: 'turns' }, ans.turns.map(turnView)), aside));
}

// forgetExchange asks for the short commit id (as `git mem forget` asks
// before removing anything) and posts it; the answer is shown as text.
async function forgetExchange(e, box) {
  const typed = window.prompt('Forget this exchange for good? It is removed from main, its objects are purged and it is never stored again. Type its short commit id (' + e.short + ') to confirm.');
  if (typed === null) return;
  const r = await fetch('/api/forget', {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ ref: e.commit, confirm: typed.trim() }),
  });
  const ans = await r.json().catch(() => ({}));
  box.replaceChildren(el('p', { id: 'forget-result', class: r.ok ? 'muted' : 'error' },
    r.ok ? 'Forgotten: ' + e.short : (ans.error || ('HTTP ' + r.status))));
}

function copyText(text, btn) {
  const done = () => { btn.textContent = 'Copied'; setTimeout(() => { btn.textContent = 'Copy'; }, 1500); };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(text).then(done, () => selectCmd());
  } else selectCmd();
}
function selectCmd() {
  const r = document.createRange();
  r.selectNodeContents($('#show-cmd'));
  const s = getSelection();
  s.removeAllRanges();
  s.addRange(r);
}

// ---- timeline -------------------------------------------------------------

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

async function viewTimeline(main, params) {
  const bucket = params.get('bucket') === 'week' ? 'week' : 'day';
  const by = params.get('by') === 'agent' ? 'agent' : 'project';
  const f = filters();
  const ans = await api('/api/timeline', Object.assign({ bucket }, f));
  const link = (b, y, label) => el('a', { class: 'button' + (b === bucket && y === by ? ' on' : ''), href: '#/timeline?bucket=' + b + '&by=' + y }, label);
  main.append(el('div', { class: 'controls' },
    link('day', by, 'per day'), link('week', by, 'per week'), ' ', link(bucket, 'project', 'by project'), link(bucket, 'agent', 'by agent')));
  const bs = ans.buckets;
  if (!bs.length) { main.append(el('p', { class: 'empty' }, 'No exchanges.')); return; }
  const key = by === 'agent' ? 'agents' : 'projects';
  const totals = {};
  for (const b of bs) for (const [g, n] of Object.entries(b[key])) totals[g] = (totals[g] || 0) + n;
  const groups = Object.keys(totals).sort((a, b) => totals[b] - totals[a] || a.localeCompare(b));
  const colour = (g) => PALETTE[groups.indexOf(g) % PALETTE.length];
  const W = Math.max(640, Math.min(1400, (main.clientWidth || 900) - 20)), H = 260, pad = 34;
  const t0 = Date.parse(bs[0].start), t1 = Date.parse(bs[bs.length - 1].start);
  const step = (bucket === 'week' ? 7 : 1) * 86400000;
  const slots = Math.max(1, Math.round((t1 - t0) / step) + 1);
  const sw = (W - 2 * pad) / slots; // a slot per day or week, bars at most 36 px wide
  const bw = Math.max(1, Math.min(36, sw));
  const maxN = Math.max(...bs.map((b) => b.count));
  const y = (n) => (H - pad) * n / maxN;
  const chart = sv('svg', { class: 'timeline', viewBox: '0 0 ' + W + ' ' + (H + 20), width: '100%', role: 'img' });
  chart.append(sv('line', { x1: pad, y1: H - pad + 10, x2: W - pad, y2: H - pad + 10, class: 'axis' }),
    sv('text', { x: 4, y: 14, class: 'tick' }, String(maxN)),
    sv('text', { x: pad, y: H + 4, class: 'tick' }, fmtDate(bs[0].start)),
    sv('text', { x: W - pad, y: H + 4, class: 'tick', 'text-anchor': 'end' }, fmtDate(bs[bs.length - 1].start)));
  const under = el('div', { id: 'bar-list' });
  for (const b of bs) {
    const slot = Math.round((Date.parse(b.start) - t0) / step);
    const g = sv('g', { class: 'bar', 'data-start': fmtDate(b.start), 'data-count': b.count, tabindex: 0 });
    let top = H - pad + 10;
    for (const grp of groups) {
      const n = b[key][grp];
      if (!n) continue;
      const h = Math.max(1, y(n));
      top -= h;
      g.append(sv('rect', { x: pad + slot * sw + (sw - bw) / 2, y: top, width: Math.max(1, bw - (bw > 3 ? 1 : 0)), height: h, fill: colour(grp) }));
    }
    g.append(sv('title', {}, fmtDate(b.start) + ': ' + b.count + ' exchanges'));
    const open = () => {
      document.querySelectorAll('g.bar.on').forEach((x) => x.classList.remove('on'));
      g.classList.add('on');
      listUnder(under, (bucket === 'week' ? 'Week of ' : '') + fmtDate(b.start), Object.assign({}, f, { since: b.start, until: b.end }));
    };
    g.addEventListener('click', open);
    g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') open(); });
    chart.append(g);
  }
  main.append(el('p', { class: 'muted' }, fmtNum(bs.reduce((a, b) => a + b.count, 0)) + ' exchanges on ' + bs.length + (bucket === 'week' ? ' weeks' : ' days') + ' · click a bar to list them'),
    el('div', { class: 'chartbox' }, chart),
    el('div', { class: 'legend' }, groups.map((g) => el('span', {}, el('i', { class: 'swatch', 'data-c': groups.indexOf(g) % PALETTE.length }), g || '(none)', ' ', el('span', { class: 'muted' }, fmtNum(totals[g]))))),
    under);
}

// ---- palace ---------------------------------------------------------------

// layout places the rooms with a few hundred steps of a small force
// simulation (repulsion, springs on links, pull to the centre), seeded on
// a circle so the same memory draws the same picture.
function layout(rooms, links, W, H) {
  const n = rooms.length;
  const pos = rooms.map((r, i) => ({ x: W / 2 + Math.cos(2 * Math.PI * i / n) * W / 3, y: H / 2 + Math.sin(2 * Math.PI * i / n) * H / 3 }));
  const at = new Map(rooms.map((r, i) => [r.room, i]));
  const es = links.map((l) => [at.get(l.a), at.get(l.b), l.count]).filter((e) => e[0] !== undefined && e[1] !== undefined);
  for (let it = 0; it < 300; it++) {
    const f = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
      let dx = pos[i].x - pos[j].x, dy = pos[i].y - pos[j].y;
      const d2 = Math.max(dx * dx + dy * dy, 25), k = 24000 / d2;
      const d = Math.sqrt(d2);
      f[i].x += k * dx / d; f[i].y += k * dy / d; f[j].x -= k * dx / d; f[j].y -= k * dy / d;
    }
    for (const [a, b] of es) {
      const dx = pos[b].x - pos[a].x, dy = pos[b].y - pos[a].y;
      const d = Math.sqrt(dx * dx + dy * dy) || 1, k = (d - 130) * 0.02;
      f[a].x += k * dx / d; f[a].y += k * dy / d; f[b].x -= k * dx / d; f[b].y -= k * dy / d;
    }
    const cool = 1 - it / 300;
    for (let i = 0; i < n; i++) {
      f[i].x += (W / 2 - pos[i].x) * 0.01; f[i].y += (H / 2 - pos[i].y) * 0.01;
      pos[i].x = Math.min(W - 60, Math.max(60, pos[i].x + Math.max(-20, Math.min(20, f[i].x)) * cool));
      pos[i].y = Math.min(H - 50, Math.max(40, pos[i].y + Math.max(-20, Math.min(20, f[i].y)) * cool));
    }
  }
  return pos;
}

async function viewPalace(main) {
  const f = filters();
  const p = await api('/api/palace', f);
  main.append(el('p', { class: 'muted' }, fmtNum(p.total_rooms) + ' rooms' + (p.rooms.length < p.total_rooms ? ', the ' + p.rooms.length + ' busiest drawn' : '') + ' · a line joins rooms that share exchanges · click a room to list them'));
  if (!p.rooms.length) { main.append(el('p', { class: 'empty' }, 'No rooms yet.')); return; }
  const W = Math.max(640, Math.min(1200, (main.clientWidth || 900) - 20)), H = 520;
  const pos = layout(p.rooms, p.links, W, H);
  const at = new Map(p.rooms.map((r, i) => [r.room, i]));
  const maxC = Math.max(...p.rooms.map((r) => r.count));
  const maxL = Math.max(1, ...p.links.map((l) => l.count));
  const types = [...new Set(p.rooms.map((r) => r.room.split(':')[0]))];
  const chart = sv('svg', { class: 'palace', viewBox: '0 0 ' + W + ' ' + H, width: '100%', role: 'img' });
  const under = el('div', { id: 'room-list' });
  for (const l of p.links) {
    const a = pos[at.get(l.a)], b = pos[at.get(l.b)];
    if (!a || !b) continue;
    chart.append(sv('line', { class: 'link', x1: a.x, y1: a.y, x2: b.x, y2: b.y, 'stroke-width': 1 + 5 * l.count / maxL, 'data-a': l.a, 'data-b': l.b },
      sv('title', {}, l.a + ' + ' + l.b + ': ' + l.count + ' exchanges')));
  }
  p.rooms.forEach((r, i) => {
    const rad = 8 + 26 * Math.sqrt(r.count / maxC);
    const g = sv('g', { class: 'room', 'data-room': r.room, 'data-count': r.count, tabindex: 0, transform: 'translate(' + pos[i].x.toFixed(1) + ' ' + pos[i].y.toFixed(1) + ')' },
      sv('circle', { r: rad.toFixed(1), fill: PALETTE[types.indexOf(r.room.split(':')[0]) % PALETTE.length] }),
      sv('text', { y: (rad + 12).toFixed(1), 'text-anchor': 'middle' }, r.room),
      sv('title', {}, r.room + ': ' + r.count + ' exchanges, last ' + fmtDate(r.last_used)));
    const open = () => {
      document.querySelectorAll('g.room.on').forEach((x) => x.classList.remove('on'));
      g.classList.add('on');
      listUnder(under, r.room, Object.assign({}, f, { room: r.room }));
    };
    g.addEventListener('click', open);
    g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') open(); });
    chart.append(g);
  });
  main.append(el('div', { class: 'chartbox' }, chart),
    el('div', { class: 'legend' }, types.map((t, i) => el('span', {}, el('i', { class: 'swatch', 'data-c': i % PALETTE.length }), t))),
    under);
}

// ---- files ----------------------------------------------------------------

async function viewFiles(main) {
  const f = filters();
  const ans = await api('/api/files', f);
  main.append(el('p', { class: 'muted' }, fmtNum(ans.total) + ' files touched' + (ans.files.length < ans.total ? ', the ' + ans.files.length + ' most touched shown' : '') + ' · click one to list its exchanges'));
  const under = el('div', { id: 'file-list' });
  const maxC = Math.max(1, ...ans.files.map((x) => x.count));
  const rows = ans.files.map((x) => {
    const open = () => listUnder(under, x.file, Object.assign({}, f, { file: x.file }));
    return el('tr', { class: 'file', tabindex: 0, onclick: open, onkeydown: (ev) => { if (ev.key === 'Enter') open(); } },
      el('td', { class: 'path' }, x.file),
      el('td', { class: 'num' }, fmtNum(x.count)),
      el('td', { class: 'barcell' }, el('meter', { min: 0, max: maxC, value: x.count })),
      el('td', { class: 'muted' }, fmtDate(x.last_used)));
  });
  main.append(el('div', { class: 'split' },
    el('table', { class: 'files' }, el('thead', {}, el('tr', {}, el('th', {}, 'file'), el('th', {}, 'exchanges'), el('th'), el('th', {}, 'last'))), el('tbody', {}, rows)),
    under));
}

// ---- stats ----------------------------------------------------------------

async function viewStats(main) {
  const ans = await api('/api/stats');
  const s = ans.stats, st = ans.status;
  const big = (label, v) => el('div', { class: 'big' }, el('b', {}, v), el('span', {}, label));
  const W = 600;
  const maxT = Math.max(1, s.verbatim_tokens, s.distilled_tokens);
  const tokBar = (label, n, cls, yy) => [sv('rect', { x: 150, y: yy, width: Math.max(1, (W - 160) * n / maxT), height: 22, class: cls }),
    sv('text', { x: 0, y: yy + 16 }, label), sv('text', { x: 156, y: yy + 16, class: 'on-bar' }, fmtNum(n) + ' tokens')];
  const tokens = sv('svg', { class: 'tokens', viewBox: '0 0 ' + W + ' 64', width: W, height: 64 },
    tokBar('verbatim', s.verbatim_tokens, 'verbatim', 4), tokBar('distilled cards', s.distilled_tokens, 'distilled', 36));
  const table = (title, obj) => {
    const rows = Object.entries(obj || {}).sort((a, b) => b[1] - a[1]);
    const m = Math.max(1, ...rows.map((r) => r[1]));
    return el('div', {}, el('h3', {}, title), el('table', { class: 'kv' }, el('tbody', {}, rows.map(([k, v]) =>
      el('tr', {}, el('td', {}, k || '(none)'), el('td', { class: 'num' }, fmtNum(v)), el('td', { class: 'barcell' }, el('meter', { min: 0, max: m, value: v })))))));
  };
  const failed = st.failed.length
    ? el('table', { class: 'failed' }, el('thead', {}, el('tr', {}, el('th', {}, 'kind'), el('th', {}, 'source'), el('th', {}, 'attempts'), el('th', {}, 'error'))),
      el('tbody', {}, st.failed.map((j) => el('tr', {}, el('td', {}, j.kind), el('td', {}, j.source), el('td', { class: 'num' }, j.attempts), el('td', {}, j.error)))))
    : el('p', { class: 'ok' }, 'none');
  main.append(
    el('div', { class: 'bigs' }, big('exchanges', fmtNum(s.exchanges)), big('sessions', fmtNum(s.sessions)), big('projects', fmtNum(s.projects)),
      big('rooms', fmtNum(s.rooms)), big('compression', s.compression ? s.compression.toFixed(1) + '×' : '–'), big('secrets redacted', fmtNum(s.redactions))),
    el('h3', {}, 'Verbatim vs distilled'), tokens,
    el('p', { class: 'muted' }, (s.first ? 'from ' + fmtDate(s.first) + ' to ' + fmtDate(s.last) : '')),
    el('div', { class: 'split' }, table('Distillers', s.distillers), table('Agents', s.agents)),
    el('h3', {}, 'Index'),
    el('table', { class: 'kv' }, el('tbody', {},
      el('tr', {}, el('td', {}, 'state'), el('td', { id: 'index-state', class: st.index_up_to_date ? 'ok' : 'warn' }, st.index)),
      el('tr', {}, el('td', {}, 'main'), el('td', {}, st.head || '(empty)')),
      el('tr', {}, el('td', {}, 'indexed'), el('td', {}, st.indexed_commit || '–')),
      el('tr', {}, el('td', {}, 'held open by this page'), el('td', {}, ans.index_open ? 'yes' : 'no')),
      el('tr', {}, el('td', {}, 'pending jobs'), el('td', {}, String(st.pending))),
      el('tr', {}, el('td', {}, 'memory'), el('td', {}, st.mem_dir)))),
    el('h3', {}, 'Failed background jobs'), failed);
}

// ---- keyboard -------------------------------------------------------------

function cards() { return [...document.querySelectorAll('#main .card')]; }
function select(i) {
  const cs = cards();
  if (!cs.length) return;
  state.sel = Math.max(0, Math.min(cs.length - 1, i));
  cs.forEach((c, j) => c.classList.toggle('sel', j === state.sel));
  cs[state.sel].scrollIntoView({ block: 'nearest' });
}

document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  const typing = t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA');
  if (ev.key === '/' && !typing) { ev.preventDefault(); $('#q').focus(); $('#q').select(); return; }
  if (ev.key === 'ArrowDown' && (!typing || t.id === 'q')) { ev.preventDefault(); select(state.sel + 1); return; }
  if (ev.key === 'ArrowUp' && (!typing || t.id === 'q')) { ev.preventDefault(); select(state.sel - 1); return; }
  if (ev.key === 'Enter' && (t.id === 'q' || !typing)) {
    const cs = cards();
    const c = cs[state.sel] || (t.id === 'q' ? cs[0] : null);
    if (c) { ev.preventDefault(); location.hash = c.getAttribute('href'); }
    return;
  }
  if (ev.key === 'Escape') {
    if (typing) t.blur();
    else if ($('#main').dataset.view === 'x') history.back();
  }
});

// ---- start ----------------------------------------------------------------

async function start() {
  const fc = await api('/api/facets');
  state.facets = fc;
  $('#head').textContent = fmtNum(fc.total) + ' exchanges' + (fc.head ? ' · main ' + fc.head.slice(0, 7) : '');
  const mode = $('#mode');
  for (const m of fc.modes) mode.append(el('option', { value: m }, m));
  mode.value = fc.default_mode;
  const opts = (sel, obj) => Object.entries(obj).sort((a, b) => b[1] - a[1]).forEach(([k, n]) => sel.append(el('option', { value: k }, k + ' (' + fmtNum(n) + ')')));
  opts($('#f-project'), fc.projects);
  opts($('#f-agent'), fc.agents);
  $('#q').addEventListener('input', onInput);
  // Enter is the keyboard's "open" (below); the form never submits.
  $('#searchbar').addEventListener('submit', (ev) => ev.preventDefault());
  $('#searchbar').addEventListener('change', (ev) => { if (ev.target.id !== 'q') refilter(); });
  $('#searchbar').addEventListener('reset', () => setTimeout(refilter, 0));
  window.addEventListener('hashchange', route);
  route();
}

// refilter re-draws the current view with the new filters.
function refilter() {
  const v = $('#main').dataset.view;
  if (v === 'search' || v === 'x') onInput();
  else route();
}

start().catch((e) => clear($('#main')).append(el('p', { class: 'error' }, String(e.message || e))));
