// halweb's page. Every name and value from the host is shown with
// textContent or as an attribute value: never as markup.
"use strict";

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const NCHAN = 8;

const state = {
  tree: null,
  allowSet: false,
  fixed: false,
  watch: [],
  capture: null,    // {seq, names, types, fired, total, periodNs, config, cycle, t, v}
  building: null,
  plot: null,
  plotKey: "",
  lastSeq: 0,
  scopeState: null,
};
window.halweb = state; // for the browser tests

function $(id) { return document.getElementById(id); }

// el makes an element with text content (never markup).
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    if (c instanceof Node) {
      const td = document.createElement("td");
      td.appendChild(c);
      tr.appendChild(td);
    } else {
      tr.appendChild(el("td", c));
    }
  }
  return tr;
}

function button(text, fn) {
  const b = el("button", text);
  b.type = "button";
  b.addEventListener("click", fn);
  return b;
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  const text = await r.text();
  if (!r.ok) throw new Error(text.trim() || r.statusText);
  return text ? JSON.parse(text) : null;
}

// Tabs.
for (const b of document.querySelectorAll("button.tab")) {
  b.addEventListener("click", () => {
    for (const o of document.querySelectorAll("button.tab")) o.classList.toggle("active", o === b);
    for (const p of document.querySelectorAll("section.panel")) p.classList.toggle("hidden", p.id !== b.dataset.tab);
    if (b.dataset.tab === "scope") resizePlot();
  });
}

// The tree.
function fill(tbody, rows) {
  const body = $(tbody).tBodies[0];
  body.replaceChildren(...rows);
}

function matches(name) {
  const f = $("filter").value.trim().toLowerCase();
  return f === "" || name.toLowerCase().includes(f);
}

function pickForSet(verb, name, value) {
  $("set-verb").value = verb;
  $("set-name").value = name;
  $("set-value").value = value;
  $("set-value").focus();
}

function renderTree() {
  const t = state.tree;
  if (!t) return;
  $("host").textContent = t.hostGone ? "host gone" : "host pid " + t.hostPid;
  $("set-form").classList.toggle("hidden", !t.allowSet);
  fill("threads", t.threads.filter(th => matches(th.name)).map(th =>
    row([th.name, th.periodNs, th.timeNs, th.tmaxNs, th.overruns, th.functs.map(f => f.name).join(" ")])));
  fill("comps", t.comps.filter(c => matches(c.name)).map(c =>
    row([c.id, c.name, c.user ? "User (pid " + c.pid + ")" : "RT", c.ready ? "ready" : "initialising"])));
  const pinRows = [];
  for (const p of t.pins) {
    if (!matches(p.name)) continue;
    const tr = row([p.name, p.type, p.dir, p.value, p.signal || ""]);
    tr.dataset.name = p.name;
    const td = document.createElement("td");
    td.appendChild(button("watch", () => addWatch(p.name)));
    if (t.allowSet && p.dir !== "OUT" && !p.signal) td.appendChild(button("set", () => pickForSet("setp", p.name, p.value)));
    tr.appendChild(td);
    pinRows.push(tr);
  }
  fill("pins", pinRows);
  fill("params", t.params.filter(p => matches(p.name)).map(p => {
    const tr = row([p.name, p.type, p.dir, p.value]);
    tr.dataset.name = p.name;
    const td = document.createElement("td");
    td.appendChild(button("watch", () => addWatch(p.name)));
    if (t.allowSet && p.dir === "RW") td.appendChild(button("set", () => pickForSet("setp", p.name, p.value)));
    tr.appendChild(td);
    return tr;
  }));
  fill("signals", t.signals.filter(g => matches(g.name)).map(g => {
    const tr = row([g.name, g.type, g.value, g.writer || "", g.pins.join(" ")]);
    tr.dataset.name = g.name;
    const td = document.createElement("td");
    td.appendChild(button("watch", () => addWatch(g.name)));
    if (t.allowSet) td.appendChild(button("set", () => pickForSet("sets", g.name, g.value)));
    tr.appendChild(td);
    return tr;
  }));
}

function renderNames() {
  const t = state.tree;
  const opts = [];
  for (const p of t.pins) opts.push(p.name);
  for (const g of t.signals) opts.push(g.name);
  const dl = $("names");
  dl.replaceChildren(...opts.map(n => { const o = document.createElement("option"); o.value = n; return o; }));
  const sel = $("thread");
  const cur = sel.value;
  sel.replaceChildren(...t.threads.map(th => { const o = el("option", th.name); o.value = th.name; return o; }));
  if (cur) sel.value = cur;
}

let namesKey = "";
async function refreshTree() {
  try {
    state.tree = await api("/api/tree");
    const key = state.tree.pins.length + "/" + state.tree.signals.length + "/" + state.tree.threads.length;
    if (key !== namesKey) { namesKey = key; renderNames(); }
    if (!$("tree").classList.contains("hidden") || !state.treeShown) { renderTree(); state.treeShown = true; }
  } catch (e) {
    $("host").textContent = "tree: " + e.message;
  }
}
$("filter").addEventListener("input", renderTree);

$("set-button").addEventListener("click", async () => {
  const req = { verb: $("set-verb").value, name: $("set-name").value.trim(), value: $("set-value").value.trim() };
  try {
    const r = await api("/api/set", req);
    $("set-result").textContent = r.ok;
    $("set-result").className = "";
  } catch (e) {
    $("set-result").textContent = e.message;
    $("set-result").className = "error";
  }
  refreshTree();
});

// The watch list.
let ws = null;
function sendWatch() {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "watch", names: state.watch }));
}

function addWatch(name) {
  if (!name || state.watch.includes(name) || state.watch.length >= 64) return;
  state.watch.push(name);
  renderWatch([]);
  sendWatch();
}

function renderWatch(values) {
  const byName = new Map(values.map(v => [v.name, v]));
  fill("watchlist", state.watch.map(n => {
    const v = byName.get(n) || { value: "", type: "" };
    const tr = row([n, v.type, v.value]);
    tr.dataset.name = n;
    tr.cells[2].className = "num";
    const td = document.createElement("td");
    td.appendChild(button("remove", () => {
      state.watch = state.watch.filter(x => x !== n);
      renderWatch([]);
      sendWatch();
    }));
    tr.appendChild(td);
    return tr;
  }));
}
$("watch-add").addEventListener("click", () => { addWatch($("watch-name").value.trim()); $("watch-name").value = ""; });

// The scope's controls.
function channelRows() {
  const body = $("channels").tBodies[0];
  const rows = [];
  for (let i = 0; i < NCHAN; i++) {
    const name = document.createElement("input");
    name.className = "name";
    name.setAttribute("list", "names");
    name.id = "chan-" + i;
    const scale = document.createElement("input");
    scale.className = "num"; scale.type = "number"; scale.step = "any"; scale.value = "1"; scale.id = "scale-" + i;
    const offset = document.createElement("input");
    offset.className = "num"; offset.type = "number"; offset.step = "any"; offset.value = "0"; offset.id = "offset-" + i;
    const show = document.createElement("input");
    show.type = "checkbox"; show.checked = true; show.id = "show-" + i;
    for (const e of [scale, offset, show]) e.addEventListener("change", draw);
    const num = el("span", i);
    const sw = el("span", null, "swatch");
    sw.style.background = COLOURS[i];
    const label = document.createElement("span");
    label.append(sw, num);
    rows.push(row([label, name, scale, offset, show]));
  }
  body.replaceChildren(...rows);
  const trig = $("trig-chan");
  trig.replaceChildren(...Array.from({ length: NCHAN }, (_, i) => { const o = el("option", i); o.value = i; return o; }));
}
channelRows();

function scopeConfig() {
  const pins = [];
  for (let i = 0; i < NCHAN; i++) {
    const v = $("chan-" + i).value.trim();
    if (v) pins.push(v);
  }
  return {
    thread: $("thread").value,
    pins: pins,
    trigger: Number($("trig-chan").value),
    edge: $("trig-edge").value,
    level: Number($("trig-level").value),
    mode: $("mode").value,
    samples: Number($("samples").value),
    position: Number($("position").value) / 100,
  };
}

async function scopeCall(path, body) {
  try {
    showScopeState(await api(path, body));
  } catch (e) {
    $("scope-error").textContent = e.message;
  }
}
$("apply").addEventListener("click", () => { $("scope-error").textContent = ""; scopeCall("/api/scope", scopeConfig()); });
$("run").addEventListener("click", () => scopeCall("/api/scope/run", {}));
$("stop").addEventListener("click", () => scopeCall("/api/scope/stop", {}));

function showScopeState(st) {
  state.scopeState = st;
  let text = st.state;
  if (st.seq) text += " (capture " + st.seq + ")";
  $("scope-state").textContent = text;
  $("scope-error").textContent = st.error || "";
  if (st.fixed && st.names.length) {
    for (let i = 0; i < NCHAN; i++) {
      const inp = $("chan-" + i);
      inp.value = st.names[i] || "";
      inp.disabled = true;
    }
  }
}

// Captures: a JSON header, rows in binary batches (onRows), a JSON end.
function onCapture(m) {
  if (m.type === "capture") {
    state.building = { seq: m.seq, names: m.names, types: m.types, fired: m.fired, total: m.total,
      periodNs: m.periodNs, config: m.config, gaps: m.gaps, cycle: [], t: [], v: m.names.map(() => []) };
  } else if (m.type === "end") {
    const b = state.building;
    if (!b || b.seq !== m.seq || b.cycle.length !== b.total) return;
    state.building = null;
    state.capture = b;
    state.lastSeq = b.seq;
    const st = state.scopeState;
    $("scope-state").textContent = (st && !st.running ? "stopped" : "triggered") + " (capture " + b.seq + ")";
    draw();
  }
}

// onRows adds a binary rows message to the capture being built: six
// little-endian uint32 (kind 1, seq, offset, rows n, channels k, 0), then
// n float64 cycles, n float64 seconds from the trigger and n float64
// values per channel. A value that is not finite becomes null (a gap).
// A message out of order or of another size drops the capture.
function onRows(buf) {
  const b = state.building;
  if (!b || buf.byteLength < 24) return;
  const d = new DataView(buf);
  const seq = d.getUint32(4, true), off = d.getUint32(8, true), n = d.getUint32(12, true), k = d.getUint32(16, true);
  if (d.getUint32(0, true) !== 1 || seq !== b.seq >>> 0) return; // seq modulo 2^32
  if (off !== b.cycle.length || k !== b.v.length || buf.byteLength !== 24 + 8 * n * (2 + k)) {
    state.building = null;
    return;
  }
  let p = 24;
  for (let i = 0; i < n; i++, p += 8) b.cycle.push(d.getFloat64(p, true));
  for (let i = 0; i < n; i++, p += 8) b.t.push(d.getFloat64(p, true));
  for (let c = 0; c < k; c++) {
    const col = b.v[c];
    for (let i = 0; i < n; i++, p += 8) {
      const v = d.getFloat64(p, true);
      col.push(Number.isFinite(v) ? v : null);
    }
  }
}

function num(id, dflt) {
  const v = Number($(id).value);
  return Number.isFinite(v) ? v : dflt;
}

// draw plots the last capture: time in ms from the trigger; each trace
// as value * scale + offset.
function draw() {
  const c = state.capture;
  if (!c || typeof uPlot === "undefined") return;
  const xs = c.t.map(t => t * 1000);
  const data = [xs];
  const series = [{ label: "ms" }];
  c.names.forEach((name, k) => {
    const scale = num("scale-" + k, 1), offset = num("offset-" + k, 0);
    data.push(c.v[k].map(v => v === null ? null : v * scale + offset));
    series.push({ label: name, stroke: COLOURS[k], width: 1.5, show: $("show-" + k).checked,
      paths: uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined });
  });
  const key = c.names.join("\u0000");
  const el = $("plot");
  if (!state.plot || state.plotKey !== key) {
    if (state.plot) state.plot.destroy();
    const opts = {
      width: Math.max(600, el.clientWidth || 900),
      height: 420,
      scales: { x: { time: false } },
      series: series,
      axes: [{ label: "ms from the trigger" }, {}],
      cursor: { drag: { x: true, y: false } },
      hooks: {
        draw: [u => {
          const ctx = u.ctx;
          ctx.save();
          ctx.setLineDash([4, 3]);
          ctx.strokeStyle = "#000";
          const x = u.valToPos(0, "x", true);
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          const cap = state.capture;
          if (cap && cap.config) {
            const k = cap.config.trigger;
            const lvl = cap.config.level * num("scale-" + k, 1) + num("offset-" + k, 0);
            const y = u.valToPos(lvl, "y", true);
            ctx.strokeStyle = COLOURS[k];
            ctx.beginPath();
            ctx.moveTo(u.bbox.left, y);
            ctx.lineTo(u.bbox.left + u.bbox.width, y);
            ctx.stroke();
          }
          ctx.restore();
        }],
        setCursor: [u => {
          const i = u.cursor.idx;
          const cap = state.capture;
          if (i === null || i === undefined || !cap) { $("cursor").textContent = ""; return; }
          const parts = ["cycle " + cap.cycle[i], (cap.t[i] * 1000).toFixed(3) + " ms"];
          cap.names.forEach((n, k) => parts.push(n + " = " + cap.v[k][i]));
          $("cursor").textContent = parts.join("   ");
        }],
      },
    };
    state.plot = new uPlot(opts, data, el);
    state.plotKey = key;
  } else {
    c.names.forEach((_, k) => state.plot.setSeries(k + 1, { show: $("show-" + k).checked }));
    state.plot.setData(data);
  }
}

function resizePlot() {
  if (state.plot) state.plot.setSize({ width: Math.max(600, $("plot").clientWidth || 900), height: 420 });
}
window.addEventListener("resize", resizePlot);

// The WebSocket: watch values, scope state and captures.
function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(proto + "//" + location.host + "/ws");
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "ok"; sendWatch(); };
  ws.onclose = (ev) => {
    $("conn").textContent = "disconnected" + (ev.reason ? ": " + ev.reason : "");
    $("conn").className = "bad";
    setTimeout(connect, 2000);
  };
  ws.binaryType = "arraybuffer";
  ws.onmessage = (ev) => {
    if (ev.data instanceof ArrayBuffer) { onRows(ev.data); return; }
    let m;
    try { m = JSON.parse(ev.data); } catch (e) { return; }
    switch (m.type) {
      case "hello": state.allowSet = m.allowSet; state.fixed = m.fixed; break;
      case "state": showScopeState(m); break;
      case "watch": renderWatch(m.values); break;
      case "host": $("host").textContent = "host gone"; break;
      case "capture": case "end": onCapture(m); break;
    }
  };
}

async function start() {
  await refreshTree();
  try { showScopeState(await api("/api/scope")); } catch (e) { /* shown by the tree */ }
  const st = state.scopeState;
  if (st && st.config && st.config.pins) {
    st.config.pins.forEach((p, i) => { if (i < NCHAN) $("chan-" + i).value = p; });
    if (st.config.thread) $("thread").value = st.config.thread;
  }
  connect();
  setInterval(refreshTree, 1000);
}
start();
