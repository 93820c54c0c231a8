// remote studio: the page. It only calls the JSON API (docs/studio.md); everything it decides, the server decides.
"use strict";
const $ = (id) => document.getElementById(id);
const S = { size: [1080, 2400], elements: [], pick: null, candidates: [], chosen: null, recording: false,
            generation: 0, frames: 0, since: performance.now(), down: null };

async function api(path, body, method) {
  const init = body === undefined && !method ? {} :
    { method: method || "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) };
  const r = await fetch(path, init);
  const data = await r.json();
  if (r.status === 409 && data.needs_confirmation && body) {
    if (confirm("Sensitive:\n" + data.needs_confirmation.join("\n") + "\n\nDo it?")) {
      return api(path, Object.assign({}, body, { confirm: true }), method);
    }
    throw new Error("not confirmed: " + data.error);
  }
  if (!r.ok) throw new Error(data.error + (data.hint ? " (" + data.hint + ")" : ""));
  return data;
}

function say(text, error) { const s = $("status"); s.textContent = text; s.className = error ? "error" : ""; }
async function guarded(fn) { try { say(""); await fn(); } catch (e) { say(e.message, true); } }

// ---------------------------------------------------------------- the live screen
async function frames() {
  for (;;) {
    const started = performance.now();
    try {
      const r = await fetch("/api/screen?format=jpeg", { cache: "no-store" });
      if (r.ok) {
        const url = URL.createObjectURL(await r.blob());
        await new Promise((ok) => { $("screen").onload = ok; $("screen").onerror = ok; $("screen").src = url; });
        URL.revokeObjectURL(url);
        S.frames += 1;
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
  const rect = $("screen").getBoundingClientRect();
  return [Math.round((ev.clientX - rect.left) / scale()), Math.round((ev.clientY - rect.top) / scale())];
}
function contains(b, p) { return b[0] <= p[0] && p[0] < b[2] && b[1] <= p[1] && p[1] < b[3]; }
function elementAt(p) {
  const hits = S.elements.filter((e) => contains(e.box, p) && (e.text || e.desc || e.clickable || e.editable));
  hits.sort((a, b) => (a.box[2] - a.box[0]) * (a.box[3] - a.box[1]) - (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]));
  return hits[0];
}

function draw(hover) {
  const o = $("overlay"); o.innerHTML = ""; const k = scale();
  const box = (b, cls) => { const d = document.createElement("div"); d.className = "box " + cls;
    Object.assign(d.style, { left: b[0] * k + "px", top: b[1] * k + "px", width: (b[2] - b[0]) * k + "px", height: (b[3] - b[1]) * k + "px" });
    o.appendChild(d); };
  if (hover) box(hover.box, "hover");
  const c = S.chosen;
  if (c && c.box) box(c.box, "pick");
  if (c && c.places && c.places.length > 1) c.places.forEach((b) => box(b, "place"));
  if (c && c.tap) { const t = document.createElement("div"); t.className = "tap";
    Object.assign(t.style, { left: c.tap[0] * k + "px", top: c.tap[1] * k + "px" }); o.appendChild(t); }
}

async function loadElements(fresh) {
  const data = await api("/api/elements" + (fresh === false ? "?fresh=0" : ""));
  S.size = data.size; S.elements = data.elements;
  const ul = $("tree"); ul.innerHTML = "";
  data.elements.forEach((e) => {
    const label = [e.text && JSON.stringify(e.text), e.desc && "desc=" + JSON.stringify(e.desc), e.id && "id=" + e.id.split("/").pop()].filter(Boolean).join(" ");
    const li = document.createElement("li");
    li.textContent = " ".repeat(Math.min(e.depth, 20)) + e.role + " " + label;
    li.onclick = () => guarded(() => inspectAt([Math.floor((e.box[0] + e.box[2]) / 2), Math.floor((e.box[1] + e.box[3]) / 2)]));
    li.onmouseenter = () => draw(e);
    ul.appendChild(li);
  });
}

// ---------------------------------------------------------------- inspect
async function inspectAt(p) {
  S.pick = p;
  const data = await api("/api/inspect", { x: p[0], y: p[1] });
  S.candidates = data.candidates;
  S.chosen = data.candidates.find((c) => c.unique) || data.candidates[0] || null;
  await loadElements(false);                  // the tree of the screen just inspected
  showCandidates();
  if (!data.tree) say("no UI tree on this screen: only a crop can name what is here");
}

function showCandidates() {
  const ol = $("candidates"); ol.innerHTML = "";
  S.candidates.forEach((c) => {
    const li = document.createElement("li");
    li.className = (c.unique ? "unique" : "refused") + (c === S.chosen ? " chosen" : "");
    const img = c.image ? `<img src="${c.image}" alt="crop"> ` : "";
    const where = c.box ? ` box [${c.box}] tap (${c.tap})` : "";
    li.innerHTML = `${img}<code></code> <span>${c.tier || "-"}${c.unique ? " · unique" : ""}${where}</span>` +
      (c.why ? `<div class="why"></div>` : "");
    li.querySelector("code").textContent = c.target_ref;
    if (c.why) li.querySelector(".why").textContent = c.why;
    li.onclick = () => { S.chosen = c; showCandidates(); };
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
  const ref = kind === "launch" ? "" : kind === "type" ? (S.chosen ? S.chosen.target_ref : "") : chosenRef();
  const out = await api("/api/template/steps", Object.assign({ kind, target_ref: ref, run: acts }, extra || {}));
  showTemplate(out);
  if (out.result) { showResult(out.result); await afterAct(); }
}

function showTemplate(t) {
  $("yaml").textContent = t.yaml;
  $("name").value = t.task.name;
  const probs = $("problems"); probs.innerHTML = "";
  t.problems.forEach((p) => { const li = document.createElement("li"); li.textContent = p;
    if (p.includes(": warning: ")) li.className = "warning"; probs.appendChild(li); });
  const ol = $("steps"); ol.innerHTML = "";
  t.task.steps.forEach((s, i) => {
    const li = document.createElement("li");
    li.innerHTML = "<code></code> <button>run step</button> <button>run from here</button> <button>✕</button>";
    li.querySelector("code").textContent = JSON.stringify(s);
    const [one, rest, del] = li.querySelectorAll("button");
    one.onclick = () => guarded(() => runSteps(i + 1, i + 1));
    rest.onclick = () => guarded(() => runSteps(i + 1, null));
    del.onclick = () => guarded(async () => showTemplate(await api("/api/template/steps/" + (i + 1), {}, "DELETE")));
    ol.appendChild(li);
  });
  const sel = $("module"); if (t.module) sel.value = t.module;
}

async function runSteps(from, to) {
  say("running ...");
  const out = await api("/api/template/run", { from, to });
  showResult(out);
  await afterAct();
}

function showResult(out) {
  const lines = [`${out.status.toUpperCase()} in ${out.seconds} s` + (out.error ? ": " + out.error : "")];
  out.steps.forEach((s) => lines.push(`  ${s.step}. ${s.label}: ${s.status}${s.tier ? " via " + s.tier : ""}` +
    `${s.verdict ? " (" + s.verdict + ")" : ""}${s.error ? " - " + s.error : ""}`));
  if (out.record) lines.push("record: " + out.record);
  $("result").textContent = lines.join("\n");
  say(out.status === "success" ? "done" : out.error || out.status, out.status !== "success");
}

async function afterAct() { S.chosen = null; S.candidates = []; showCandidates(); await loadElements(); }

// ---------------------------------------------------------------- recording
async function record(action, extra) {
  const out = await api("/api/record", Object.assign({ action }, extra));
  showTemplate(out.template); showResult(out.result); await afterAct();
}

async function toggleRecord() {
  if (!S.recording) {
    await api("/api/record/start", {});
    S.recording = true; document.body.classList.add("recording"); $("record").textContent = "■ stop";
    say("recording: tap, long-press (hold), swipe (drag) on the screen; type with the box below");
    return;
  }
  const out = await api("/api/record/stop", {});
  S.recording = false; document.body.classList.remove("recording"); $("record").textContent = "● record";
  const sentence = prompt("The task, as a person says it (its typed values become {slots}):", $("sentence").value || "");
  const check = prompt("The final check (JSON), proposed from the last screen:", JSON.stringify(out.proposed_check));
  const body = {};
  if (sentence) body.sentence = sentence;
  if (check) body.success_check = JSON.parse(check);
  showTemplate(await api("/api/template", body));
}

// ---------------------------------------------------------------- a run record
async function loadRun() {
  const run = await api("/api/run");
  $("run").hidden = false;
  const ol = $("run-steps"); ol.innerHTML = "";
  run.steps.forEach((s) => {
    const li = document.createElement("li");
    li.textContent = `${s.action} ${s.target_ref} — ${s.status}${s.tier ? " via " + s.tier : ""} ${s.verdict || ""}`;
    li.onclick = () => guarded(async () => {
      const d = $("run-detail");
      d.innerHTML = s.screens.map((p) => `<img src="/api/run/steps/${s.n}/${p}.png" alt="${p}">`).join("") +
        `<div>box ${JSON.stringify(s.box)} ${s.error || ""}</div><button>re-decide offline</button><pre></pre>`;
      d.querySelector("button").onclick = () => guarded(async () => {
        const r = await api(`/api/run/steps/${s.n}/redecide`, {});
        d.querySelector("pre").textContent = r.decisions.map((x) => `${x.kind}: recorded ${x.recorded} / now ${x.replayed}` +
          (x.changed ? "  CHANGED" : "  same") + (x.note ? " (" + x.note + ")" : "")).join("\n") || "nothing to decide";
      });
    });
    ol.appendChild(li);
  });
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
    if (!S.recording) return inspectAt(down.p);
    if (moved) return record("swipe", { x: down.p[0], y: down.p[1], x2: p[0], y2: p[1] });
    const el = elementAt(down.p);
    if (el && el.editable && held <= 600) {     // a text field: typed into with the box below (one step)
      S.field = down.p; say("type into this field with the box below"); return;
    }
    return record(held > 600 ? "long_press" : "tap", { x: down.p[0], y: down.p[1] });
  }));
  $("launch-this").onclick = () => guarded(() => add("launch"));
  $("tap-this").onclick = () => guarded(() => add("tap"));
  $("wait-this").onclick = () => guarded(() => add("wait"));
  $("check-this").onclick = () => guarded(() => add("check"));
  $("type-here").onclick = () => guarded(() => S.recording ?
    record("type", Object.assign({ text: $("text").value, slot: $("slot").value },
                                 S.field ? { x: S.field[0], y: S.field[1] } : {})).then(() => { S.field = null; }) :
    add("type", { text: $("text").value, slot: $("slot").value }));
  $("act-tap").onclick = () => guarded(async () => {
    showResult(await api("/api/act", { step: { action: "tap", target_ref: chosenRef() } })); await afterAct(); });
  $("set-task").onclick = () => guarded(async () => showTemplate(await api("/api/template",
    Object.assign({ name: $("name").value }, $("sentence").value ? { sentence: $("sentence").value } : {}))));
  $("run-all").onclick = () => guarded(() => runSteps(1, null));
  $("save").onclick = () => guarded(async () => {
    const t = await api("/api/save", { module: $("module").value, name: $("name").value });
    showTemplate(t); say("saved into " + t.saved + ": `remote modules check` and `remote run` use it now");
  });
  $("record").onclick = () => guarded(toggleRecord);
  $("module").onchange = () => guarded(async () => showTemplate(await api("/api/template", { module: $("module").value })));
}

async function start() {
  wire();
  const info = await api("/api/info");
  S.mode = info.mode; S.size = info.size;
  $("mode").textContent = info.mode === "live" ? "live phone" : "screenshot file (inspect only)";
  const sel = $("module");
  info.modules.forEach((m) => { const o = document.createElement("option"); o.value = o.textContent = m; sel.appendChild(o); });
  sel.value = info.module;
  if (info.mode !== "live") ["record", "act-tap", "run-all"].forEach((id) => { $(id).disabled = true; });
  showTemplate(await api("/api/template"));
  await loadElements();
  if (info.run) await loadRun();
  frames();
}
guarded(start);
