// remote studio: the page. It only calls the JSON API (docs/studio.md); everything it decides, the server decides.
// Every string from the phone, a record or a model is put on the page as text (textContent, attributes set one
// by one), never as HTML; the server's Content-Security-Policy runs this file and nothing inline.
"use strict";
const $ = (id) => document.getElementById(id);
const S = { size: [1080, 2400], elements: [], sel: null, candidates: [], chosen: null, recording: false,
            folded: new Set(), frames: 0, since: performance.now(), down: null, mode: "live", template: null };

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.entries(props || {}).forEach(([k, v]) => {
    if (k === "text") node.textContent = v; else if (k === "cls") node.className = v;
    else if (k.startsWith("on")) node[k] = v; else node.setAttribute(k, v);
  });
  children.forEach((c) => node.append(c));
  return node;
}

async function api(path, body, method) {
  const init = body === undefined && !method ? {} :
    { method: method || "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) };
  const r = await fetch(path, init);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error + (data.hint ? " (" + data.hint + ")" : ""));
  return data;
}

function running() { $("result").textContent = ""; say("running on the phone …"); }
function say(text, error) { const s = $("status"); s.textContent = text; s.className = error ? "error" : ""; }
async function guarded(fn) { try { say(""); await fn(); } catch (e) { say(e.message, true); } finally { enable(); } }

// ---------------------------------------------------------------- the live screen
async function frames() {
  for (;;) {
    const started = performance.now();
    try {
      const r = await fetch("/api/screen?format=jpeg", { cache: "no-store" });
      if (r.ok) {
        const url = URL.createObjectURL(await r.blob());
        // decoded aside first, the shown picture is swapped to an image the page already holds: it never shows the
        // sizeless in-between of a loading source (boxes drawn then were scaled by zero)
        const aside = new Image(); aside.src = url;
        const ready = await aside.decode().then(() => true, () => false);
        if (ready) await new Promise((ok) => { $("screen").onload = ok; $("screen").onerror = ok; $("screen").src = url; });
        URL.revokeObjectURL(url);
        if ($("screen").clientWidth !== S.drawnAt) draw(null);   // the boxes follow the picture's size
        S.frames += ready ? 1 : 0;
        const secs = (performance.now() - S.since) / 1000;
        if (secs > 2) { $("fps").textContent = (S.frames / secs).toFixed(1) + " frames/s"; S.frames = 0; S.since = performance.now(); }
      }
    } catch (e) { /* the next frame will tell */ }
    if (S.mode !== "live") return;
    await new Promise((ok) => setTimeout(ok, Math.max(0, 200 - (performance.now() - started))));
  }
}

function scale() { return $("screen").clientWidth / S.size[0]; }
function devicePoint(ev) {
  const rect = $("screen").getBoundingClientRect(); const k = scale();
  return [Math.max(0, Math.min(S.size[0] - 1, Math.round((ev.clientX - rect.left) / k))),
          Math.max(0, Math.min(S.size[1] - 1, Math.round((ev.clientY - rect.top) / k)))];
}
function contains(b, p) { return b[0] <= p[0] && p[0] < b[2] && b[1] <= p[1] && p[1] < b[3]; }
const area = (b) => (b[2] - b[0]) * (b[3] - b[1]);
function elementAt(p) {
  const hits = S.elements.filter((e) => contains(e.box, p) && (e.text || e.desc || e.clickable || e.editable || e.checkable));
  hits.sort((a, b) => area(a.box) - area(b.box));
  return hits[0];
}

function draw(hover) {
  const o = $("overlay"); o.replaceChildren(); S.drawnAt = $("screen").clientWidth;
  if (!S.drawnAt || !$("screen").naturalWidth) return;   // no picture yet: its first frame draws the boxes
  const k = scale();
  const box = (b, cls) => { const d = el("div", { cls: "box " + cls });
    Object.assign(d.style, { left: b[0] * k + "px", top: b[1] * k + "px", width: (b[2] - b[0]) * k + "px", height: (b[3] - b[1]) * k + "px" });
    o.appendChild(d); };
  if (hover) box(hover.box, "hover");
  if (S.sel) box(S.sel.box, "selected");
  const c = S.chosen;
  if (c && c.box) box(c.box, "pick");
  if (c && c.places && c.places.length > 1) c.places.forEach((b) => box(b, "place"));
  if (c && c.tap) { const t = el("div", { cls: "tap" });
    Object.assign(t.style, { left: c.tap[0] * k + "px", top: c.tap[1] * k + "px" }); o.appendChild(t); }
}

// ---------------------------------------------------------------- the tree, its search, the attribute pane
async function loadElements(fresh) {
  const data = await api("/api/elements" + (fresh === false ? "?fresh=0" : ""));
  S.size = data.size; S.elements = data.elements;
  if (S.sel) S.sel = S.elements.find((e) => e.n === S.sel.n && e.box.join() === S.sel.box.join()) || null;
  showTree();
}

function label(e) {
  return [e.role, e.text && JSON.stringify(e.text), e.desc && "desc=" + JSON.stringify(e.desc),
          e.id && "id=" + e.id.split("/").pop()].filter(Boolean).join(" ");
}

function showTree() {
  const ul = $("tree"); ul.replaceChildren();
  const q = $("search").value.trim().toLowerCase();
  let hideBelow = Infinity;
  S.elements.forEach((e, i) => {
    if (e.depth <= hideBelow) hideBelow = Infinity;
    const hit = !q || [e.text, e.id, e.desc].some((v) => v && v.toLowerCase().includes(q));
    if (e.depth > hideBelow || !hit) return;
    const parent = i + 1 < S.elements.length && S.elements[i + 1].depth > e.depth;
    const folded = S.folded.has(e.n);
    if (folded && !q) hideBelow = e.depth;
    const caret = el("span", { cls: "caret", text: parent && !q ? (folded ? "▸" : "▾") : " " });
    caret.onclick = (ev) => { ev.stopPropagation(); if (folded) S.folded.delete(e.n); else S.folded.add(e.n); showTree(); };
    const li = el("li", { cls: S.sel === e ? "sel" : "", "data-n": String(e.n) }, caret, el("span", { text: label(e) }));
    li.style.paddingLeft = Math.min(e.depth, 30) * 12 + "px";
    li.onclick = () => guarded(() => select(e, true));
    li.onmouseenter = () => draw(e);
    ul.appendChild(li);
  });
}

const ATTRS = [["text", "text"], ["resource-id", "id"], ["class", "class"], ["content-desc", "desc"], ["bounds", "box"],
  ["clickable", "clickable"], ["enabled", "enabled"], ["focused", "focused"], ["checkable", "checkable"],
  ["checked", "checked"], ["editable", "editable"], ["package", "package"]];
function showAttrs() {
  const dl = $("attrs"); dl.replaceChildren();
  if (!S.sel) return;
  ATTRS.forEach(([name, key]) => {
    const v = S.sel[key];
    dl.append(el("dt", { text: name }), el("dd", { text: Array.isArray(v) ? "[" + v.join(", ") + "]" : String(v) }));
  });
}

async function select(e, inspect) {
  S.sel = e; showAttrs(); showTree(); draw(null);
  const row = document.querySelector(`#tree li[data-n="${CSS.escape(String(e.n))}"]`);
  if (row) row.scrollIntoView({ block: "nearest" });
  if (inspect) await inspectAt([Math.floor((e.box[0] + e.box[2]) / 2), Math.floor((e.box[1] + e.box[3]) / 2)], false);
}

// ---------------------------------------------------------------- inspect
async function inspectAt(p, pick) {
  const data = await api("/api/inspect", { x: p[0], y: p[1] });
  S.candidates = data.candidates;
  S.chosen = data.candidates.find((c) => c.unique) || data.candidates[0] || null;
  await loadElements(false);                  // the tree of the screen just inspected
  if (pick !== false) { const e = elementAt(p); if (e) await select(e, false); }
  showCandidates();
  if (!data.tree) say("no UI tree on this screen: only a crop can name what is here");
}

function showCandidates() {
  const ol = $("candidates"); ol.replaceChildren();
  S.candidates.forEach((c) => {
    const li = el("li", { cls: (c.unique ? "unique" : "refused") + (c === S.chosen ? " chosen" : "") });
    if (c.image) li.append(el("img", { src: c.image, alt: "crop" }), " ");
    li.append(el("code", { text: c.target_ref }), " ",
      el("span", { text: (c.tier || "-") + (c.unique ? " · unique" : "") + (c.box ? ` box [${c.box}] tap (${c.tap})` : "") }));
    if (c.why) li.append(el("div", { cls: "why", text: c.why }));
    li.onclick = () => { S.chosen = c; showCandidates(); enable(); };
    ol.appendChild(li);
  });
  draw(null);
}

function chosenRef() {
  if (!S.chosen) throw new Error("click an element on the screen first");
  return S.chosen.target_ref;
}

// ---------------------------------------------------------------- the template
async function add(kind, extra) {
  const acts = ["launch", "tap", "type"].includes(kind);     // these run on the phone as they are added
  const ref = ["launch", "app"].includes(kind) ? "" : kind === "type" ? (S.chosen ? S.chosen.target_ref : "") : chosenRef();
  if (acts) running();
  const out = await api("/api/template/steps", Object.assign({ kind, target_ref: ref, run: acts }, extra || {}));
  showTemplate(out);
  if (out.result) { showResult(out.result); await afterAct(); }
}

function showTemplate(t) {
  S.template = t;
  $("name").value = t.task.name;
  const list = (id, items, cls) => { const ul = $(id); ul.replaceChildren();
    items.forEach((p) => ul.append(el("li", { text: p, cls: typeof cls === "function" ? cls(p) : cls || "" }))); };
  list("problems", t.problems.filter((p, i) => !t.step_problems.flat().some((s) => p.endsWith(s))),
       (p) => p.includes(": warning: ") ? "warning" : "");
  list("notes", t.notes, "note");
  $("ends").textContent = t.ends;
  $("ends").className = t.task.success_check ? "ok" : "error";
  const ol = $("steps"); ol.replaceChildren();
  t.lines.forEach((line, i) => {
    const n = i + 1;
    const input = el("input", { cls: "line", value: line, "aria-label": "step " + n });
    input.onchange = () => guarded(async () => showTemplate(await api("/api/template/steps/" + n, { line: input.value }, "PUT")));
    const li = el("li", { draggable: "true", "data-n": String(n) }, el("span", { cls: "grip", text: n + " ⠿", title: "drag to move" }), input,
      el("button", { text: "run", title: "run this step", onclick: () => guarded(() => runSteps(n, n)) }),
      el("button", { text: "run from here", onclick: () => guarded(() => runSteps(n, null)) }),
      el("button", { text: "✕", title: "delete", onclick: () => guarded(async () => showTemplate(await api("/api/template/steps/" + n, {}, "DELETE"))) }));
    (t.step_problems[i] || []).forEach((p) => li.append(el("div", { cls: p.startsWith("warning") ? "warning" : "problem", text: p })));
    li.ondragstart = (ev) => { ev.dataTransfer.setData("text/plain", String(n)); };
    li.ondragover = (ev) => ev.preventDefault();
    li.ondrop = (ev) => { ev.preventDefault(); const from = Number(ev.dataTransfer.getData("text/plain"));
      if (from && from !== n) guarded(async () => showTemplate(await api("/api/template/steps/" + from, { to: n }))); };
    ol.appendChild(li);
  });
  const sel = $("module"); if (t.module) sel.value = t.module;
  $("export-yaml").textContent = t.yaml;
}

async function runSteps(from, to) {
  running();
  const out = await api("/api/template/run", { from, to });
  showResult(out);
  await afterAct();
}

function showResult(out) {
  const lines = [`${out.status.toUpperCase()} in ${out.seconds} s` + (out.part ? " (steps only: a part of the template has no final check)" : "") +
    (out.error ? ": " + out.error : "")];
  out.steps.forEach((s) => lines.push(`  ${s.step}. ${s.label}: ${s.status}${s.tier ? " via " + s.tier : ""}` +
    `${s.verdict ? " (" + s.verdict + ")" : ""}${s.error ? " - " + s.error : ""}` + (s.notes.length ? " [" + s.notes.join("; ") + "]" : "")));
  if (out.final_check) lines.push("final check: " + (out.final_check.passed ? "passed" : out.final_check.passed === false ? "FAILED" : "undecided") +
    (out.final_check.summary ? " (" + out.final_check.summary + ")" : ""));
  if (out.record) lines.push("record: " + out.record);
  $("result").textContent = lines.join("\n");
  say(out.status === "success" ? "done" : out.error || out.status, out.status !== "success");
}

async function afterAct() { S.chosen = null; S.candidates = []; S.sel = null; showAttrs(); showCandidates(); await loadElements(); }

// ---------------------------------------------------------------- phone panel and recording
async function phone(body) {
  const out = await api("/api/phone", body);
  if (out.template) showTemplate(out.template);
  if (out.result) showResult(out.result);
  if (out.done) say(out.done);
  await afterAct();
}

async function record(action, extra) {
  running();
  const out = await api("/api/record", Object.assign({ action }, extra));
  showTemplate(out.template); showResult(out.result); await afterAct();
}

async function toggleRecord() {
  if (!S.recording) {
    say("recording: the launch that gets here first …");
    const out = await api("/api/record/start", {});
    S.recording = true; document.body.classList.add("recording"); $("record").textContent = "■ stop";
    showTemplate(out.template); if (out.launch) { showResult(out.launch); await afterAct(); }
    say("recording: tap, long-press (hold), swipe (drag) on the screen; BACK/HOME; type with the box below");
    return;
  }
  const out = await api("/api/record/stop", {});
  S.recording = false; document.body.classList.remove("recording"); $("record").textContent = "● record";
  showTemplate(out.template);
  const ul = $("choices"); ul.replaceChildren();
  out.choices.forEach((c, i) => {
    const box = el("input", { type: "checkbox", id: "choice-" + i, "data-i": String(i) }); box.checked = c.chosen;
    ul.append(el("li", {}, box, " ", el("label", { for: "choice-" + i, text: c.label })));
  });
  if (!out.choices.length) ul.append(el("li", { text: "nothing to propose: click what the finished screen shows, then a final check button" }));
  S.choices = out.choices;
  $("stop-sentence").value = $("sentence").value;
  $("stop-form").showModal();
}

async function useStop() {
  const check = {};
  document.querySelectorAll("#choices input:checked").forEach((b) => Object.assign(check, S.choices[Number(b.dataset.i)].success_check));
  const body = { success_check: check };
  if ($("stop-sentence").value.trim()) body.sentence = $("stop-sentence").value.trim();
  if ($("stop-name").value.trim()) body.name = $("stop-name").value.trim();
  showTemplate(await api("/api/template", body));
  $("sentence").value = $("stop-sentence").value;
  $("stop-form").close();
}

// ---------------------------------------------------------------- a run record
async function loadRun() {
  const run = await api("/api/run");
  $("run").hidden = false;
  $("run-title").textContent = "Run record: " + (run.task || "(no task)") + " — " + (run.status || "?").toUpperCase();
  $("run-meta").textContent = run.dir + (run.module ? " · module " + run.module : "") + (run.error ? " · " + run.error : "");
  const ol = $("run-steps"); ol.replaceChildren();
  run.steps.forEach((s) => {
    const li = el("li", { cls: s.status === "success" ? "ok" : "error" },
      el("code", { text: `${s.action} ${s.target_ref}` }), " ",
      el("span", { text: `${s.status}${s.tier ? " via " + s.tier : ""} ${s.verdict || ""}` }));
    if (s.error) li.append(el("div", { cls: "why", text: s.error }));
    li.onclick = () => guarded(async () => {
      document.querySelectorAll("#run-steps li").forEach((x) => x.classList.remove("chosen")); li.classList.add("chosen");
      $("run-shots").replaceChildren(...s.screens.map((p) => el("figure", {}, el("img", { src: `/api/run/steps/${encodeURIComponent(s.n)}/${encodeURIComponent(p)}.png`, alt: p }), el("figcaption", { text: p }))));
      $("run-box").textContent = "box " + JSON.stringify(s.box) + (s.error ? " · " + s.error : "");
      $("decisions").textContent = "";
      $("redecide").disabled = false;
      $("redecide").onclick = () => guarded(async () => {
        const r = await api(`/api/run/steps/${encodeURIComponent(s.n)}/redecide`, {});
        $("decisions").textContent = r.decisions.map((x) => `${x.kind}: recorded ${x.recorded} / now ${x.replayed}` +
          (x.changed ? "  CHANGED" : "  same") + (x.note ? " (" + x.note + ")" : "")).join("\n") || "nothing to decide";
      });
    });
    ol.appendChild(li);
  });
}

// ---------------------------------------------------------------- buttons enabled only when they apply
function enable() {
  const live = S.mode === "live"; const t = S.template;
  const has = { pick: !!S.chosen, switch: !!S.chosen && !!S.sel && !!S.sel.checkable };
  document.querySelectorAll("[data-needs]").forEach((b) => { b.disabled = !live || !has[b.dataset.needs]; });
  ["launch-this", "app-this", "record", "type-here"].forEach((id) => { $(id).disabled = !live; });
  document.querySelectorAll("#panel button").forEach((b) => { b.disabled = !live || (S.recording && !!b.dataset.rotate); });
  const steps = t ? t.task.steps.length : 0;
  $("run-all").disabled = !live || !steps;
  $("save").disabled = !steps || !t.task.success_check || $("name").value === "new_task" || S.recording;
}

// ---------------------------------------------------------------- wiring
function wire() {
  const stage = $("stage");
  stage.addEventListener("mousemove", (ev) => { if (!S.down) draw(elementAt(devicePoint(ev))); });
  stage.addEventListener("mousedown", (ev) => { ev.preventDefault(); S.down = { p: devicePoint(ev), t: performance.now() }; });
  stage.addEventListener("mouseup", (ev) => guarded(async () => {
    const down = S.down; S.down = null; if (!down) return;
    const p = devicePoint(ev); const held = performance.now() - down.t;
    const moved = Math.hypot(p[0] - down.p[0], p[1] - down.p[1]) > 30;
    if (!S.recording) return moved && S.mode === "live" ? phone({ swipe: [down.p[0], down.p[1], p[0], p[1]] }) : inspectAt(down.p);
    if (moved) return record("swipe", { x: down.p[0], y: down.p[1], x2: p[0], y2: p[1] });
    const e = elementAt(down.p);
    if (e && e.editable && held <= 600) { S.field = down.p; say("type into this field with the box below"); return; }
    return record(held > 600 ? "long_press" : "tap", { x: down.p[0], y: down.p[1] });
  }));
  document.querySelectorAll("#panel button").forEach((b) => {
    b.onclick = () => guarded(() => phone(b.dataset.rotate ? { rotate: b.dataset.rotate } : { key: b.dataset.key })); });
  const buttons = { "launch-this": "launch", "tap-this": "tap", "wait-this": "wait", "check-this": "check", "gone-this": "gone",
    "on-this": "switch_on", "off-this": "switch_off", "app-this": "app" };
  Object.entries(buttons).forEach(([id, kind]) => { $(id).onclick = () => guarded(() => add(kind)); });
  $("type-here").onclick = () => guarded(async () => {
    const text = $("text").value; const slot = $("slot").value;
    if (S.recording) { await record("type", Object.assign({ text, slot }, S.field ? { x: S.field[0], y: S.field[1] } : {})); S.field = null; }
    else if (slot || S.chosen) await add("type", { text, slot });
    else await phone({ text });
  });
  $("act-tap").onclick = () => guarded(async () => {
    running();
    showResult(await api("/api/act", { step: { action: "tap", target_ref: chosenRef() } })); await afterAct(); });
  $("set-task").onclick = () => guarded(async () => showTemplate(await api("/api/template",
    Object.assign({ name: $("name").value }, $("sentence").value ? { sentence: $("sentence").value } : {}))));
  $("name").oninput = () => enable();
  $("run-all").onclick = () => guarded(() => runSteps(1, null));
  $("save").onclick = () => guarded(async () => {
    const t = await api("/api/save", { module: $("module").value, name: $("name").value });
    showTemplate(t); say("saved into " + t.saved + ": `remote modules check` and `remote run` use it now");
  });
  $("record").onclick = () => guarded(toggleRecord);
  $("stop-use").onclick = () => guarded(useStop);
  $("stop-cancel").onclick = () => $("stop-form").close();
  $("module").onchange = () => guarded(async () => showTemplate(await api("/api/template", { module: $("module").value })));
  $("new-module").onclick = () => $("module-form").showModal();
  $("module-cancel").onclick = () => $("module-form").close();
  $("module-create").onclick = () => guarded(async () => {
    const body = { name: $("module-name").value.trim() };
    if ($("module-package").value.trim()) body.package = $("module-package").value.trim();
    const t = await api("/api/modules", body);
    const sel = $("module"); sel.append(el("option", { value: t.module, text: t.module }));
    showTemplate(t); $("module-form").close(); say("created " + t.created);
  });
  $("search").oninput = () => showTree();
  $("refresh").onclick = () => guarded(() => loadElements());
  $("export").ontoggle = () => { if ($("export").open) guarded(async () => {
    const x = await api("/api/template/export"); $("export-yaml").textContent = x.yaml; $("export-python").textContent = x.python; }); };
  window.addEventListener("resize", () => draw(null));
}

async function start() {
  wire();
  const info = await api("/api/info");
  S.mode = info.mode; S.size = info.size;
  $("mode").textContent = info.run ? "run record" : info.mode === "live" ? "live phone" : "screenshot file (inspect only)";
  if (info.mode !== "live") document.body.classList.add("still");
  if (info.run) document.body.classList.add("runmode");
  const sel = $("module");
  info.modules.forEach((m) => sel.append(el("option", { value: m, text: m })));
  sel.value = info.module;
  showTemplate(await api("/api/template"));
  await loadElements();
  if (info.run) await loadRun();
  frames();
}
guarded(start);
