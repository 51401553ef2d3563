// tempr recall console: plain JavaScript, no build step, no external asset.
// Talks to the gateway's JSON routes: /v1/banks, /v1/banks/{id}, the recall route, /v1/fleet.
"use strict";

const $ = (sel) => document.querySelector(sel);
const STRATEGIES = ["semantic", "keyword", "graph", "temporal"];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function fmt(value, digits = 3) {
  return typeof value === "number" ? value.toFixed(digits) : "–";
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("#api-key").value.trim();
  if (key) { h["Authorization"] = `Bearer ${key}`; h["X-API-Key"] = key; }
  return h;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers() });
  let body = null;
  try { body = await response.json(); } catch (_) { body = null; }
  if (!response.ok) {
    const detail = body && (body.detail || body.message) ? (body.detail || body.message) : response.statusText;
    throw new Error(`${response.status}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
  return body;
}

// ---------- banks ----------
async function loadBanks() {
  const select = $("#bank");
  try {
    const { banks } = await api("/v1/banks");
    select.replaceChildren(...banks.map((b) => el("option", { value: b.bank_id, text: `${b.bank_id} (${b.facts} facts)` })));
    const wanted = new URLSearchParams(location.search).get("bank") || localStorage.getItem("tempr.bank");
    if (wanted && banks.some((b) => b.bank_id === wanted)) select.value = wanted;
    if (!banks.length) $("#bank-info").textContent = "no banks yet: ingest facts with `tempr ingest --bank NAME file.jsonl`";
    else await loadBank();
  } catch (err) {
    $("#bank-info").replaceChildren(el("span", { class: "error", text: `could not list banks (${err.message})` }));
  }
}

async function loadBank() {
  const bank = $("#bank").value;
  if (!bank) return;
  localStorage.setItem("tempr.bank", bank);
  const info = await api(`/v1/banks/${encodeURIComponent(bank)}?recent=12`);
  const types = Object.entries(info.types).map(([t, n]) => `${t} ${n}`).join(" · ") || "none";
  const tags = Object.keys(info.tags).slice(0, 12).join(", ") || "none";
  $("#bank-info").replaceChildren(
    el("div", { id: "bank-size", text: `${info.facts} facts · ${info.entities} entities · ${info.documents} documents` }),
    el("div", { class: "muted", text: `types: ${types}` }),
    el("div", { class: "muted", text: `tags: ${tags}` }),
  );
  $("#recent-facts").replaceChildren(...info.recent_facts.map((f) =>
    el("li", {}, f.text, el("small", { text: ` ${(f.occurred_start || f.mentioned_at || "").slice(0, 10)} · ${f.type}` }))));
}

// ---------- recall ----------
function split(value) {
  const parts = value.split(",").map((s) => s.trim()).filter(Boolean);
  return parts.length ? parts : null;
}

function recallBody() {
  const body = {
    query: $("#query").value,
    budget: $("#budget").value,
    max_tokens: Number($("#max-tokens").value || 4096),
    tags_match: $("#tags-match").value,
    trace: true,
  };
  const types = split($("#types").value), tags = split($("#tags").value), ts = $("#query-ts").value.trim();
  if (types) body.types = types;
  if (tags) body.tags = tags;
  if (ts) body.query_timestamp = ts;
  return body;
}

async function runRecall(event) {
  event.preventDefault();
  const bank = $("#bank").value;
  $("#run").disabled = true;
  $("#status").textContent = `asking bank ${bank}…`;
  try {
    const started = performance.now();
    const response = await api(`/v1/default/banks/${encodeURIComponent(bank)}/memories/recall`,
      { method: "POST", body: JSON.stringify(recallBody()) });
    $("#status").textContent = `answered in ${(performance.now() - started).toFixed(0)} ms (round trip)`;
    renderAnswer(response);
  } catch (err) {
    $("#status").replaceChildren(el("span", { class: "error", text: err.message }));
  } finally {
    $("#run").disabled = false;
  }
}

function byId(list) {
  const out = {};
  for (const item of list || []) out[item.id] = item;
  return out;
}

function renderAnswer(r) {
  const trace = r.trace || {};
  const fusion = byId(trace.fusion), boosts = byId(trace.boosts), packing = byId(trace.packing);
  const rerank = (trace.rerank && trace.rerank.scores) || {};
  const fusedCount = (trace.fusion || []).length;
  const limit = Number($("#limit").value || 0);
  const shown = limit > 0 ? r.results.slice(0, limit) : r.results;
  $("#summary").replaceChildren(
    el("b", { text: `${r.results.length} memories` }),
    shown.length < r.results.length ? ` (showing ${shown.length})` : "",
    ` from ${fusedCount} fused candidates · bank ${r.bank_id} · budget ${r.budget} · reranker ${r.reranker}`,
    r.cache ? ` · cache ${r.cache}` : "",
    r.degraded && r.degraded.length ? el("span", { class: "error", text: ` · degraded: ${r.degraded.join(", ")}` }) : "",
  );
  const rows = shown.map((m, i) => {
    const f = fusion[m.id] || {}, b = boosts[m.id] || {}, p = packing[m.id] || {};
    const ranks = f.ranks || {};
    const boostText = Object.entries(b).filter(([k]) => k.endsWith("_boost"))
      .map(([k, v]) => `${k.replace(/_boost$/, "")} ×${fmt(v, 2)}`).join(" ");
    const extra = Object.entries(b).filter(([k]) => k !== "id" && !k.endsWith("_boost"))
      .map(([k, v]) => `${k}: ${typeof v === "number" ? fmt(v, 4) : JSON.stringify(v)}`).join("\n");
    const when = (m.occurred_start || m.mentioned_at || "").slice(0, 10);
    return el("tr", { class: "memory-row", "data-id": m.id },
      el("td", { class: "num", text: i + 1 }),
      el("td", { class: "memory" }, m.text, el("small", { text: [when, m.type, ...(m.tags || [])].filter(Boolean).join(" · ") })),
      ...STRATEGIES.map((s) => el("td", { class: `rank ${ranks[s] ? "hit" : ""}`, "data-strategy": s, text: ranks[s] || "–" })),
      el("td", { class: "num rrf", text: fmt(f.rrf, 4) }),
      el("td", { class: "num rerank", text: fmt(rerank[m.id]) }),
      el("td", { class: "boosts", title: extra, text: boostText || "–" }),
      el("td", { class: "num", text: fmt(m.scores.final) }),
      el("td", { class: `pack-${p.outcome || "none"}`, text: p.outcome ? `${p.outcome} (${p.tokens} of ${p.remaining_before} tok)` : "–" }),
    );
  });
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: 11, class: "muted", text: "no memories matched (the bank exists but nothing fits the query and filters)" })));
  $("#results tbody").replaceChildren(...rows);
  renderWaterfall(r.timings_ms || {});
  renderTraceExtra(trace);
  $("#raw").textContent = JSON.stringify(r, null, 2);
  $("#answer").hidden = false;
}

// Mirrors tempr/recall/waterfall.py: one time line from enqueue, queue wait then work per step.
function waterfall(t) {
  const bars = [];
  let cursor = 0;
  const has = (k) => typeof t[k] === "number";
  const step = (name, waitKey, workKeys) => {
    if (!has(waitKey) && !workKeys.some(has)) return;
    const bar = { step: name, start: cursor, wait: t[waitKey] || 0, work: workKeys.reduce((s, k) => s + (t[k] || 0), 0) };
    bars.push(bar);
    cursor = bar.start + bar.wait + bar.work;
  };
  step("start", "queue.start", ["cache_lookup", "analyse"]);
  const groupStart = cursor;
  for (const s of STRATEGIES) {
    if (has(`strategy.${s}`)) bars.push({ step: `strategy.${s}`, start: groupStart, wait: t[`queue.strategy.${s}`] || 0, work: t[`strategy.${s}`] });
  }
  if (has("strategies")) cursor = groupStart + t.strategies;
  for (const name of ["fuse", "rerank", "finish"]) step(name, `queue.${name}`, [name]);
  const total = has("total") ? t.total : Math.max(0, ...bars.map((b) => b.start + b.wait + b.work));
  return { bars, total };
}

function renderWaterfall(timings) {
  const { bars, total } = waterfall(timings);
  const scale = total > 0 ? 100 / total : 0;
  const pct = (v) => `${Math.min(100, v * scale).toFixed(2)}%`;
  const rows = bars.map((b) => el("div", { class: "wf-row", "data-step": b.step },
    el("span", { text: b.step }),
    el("div", { class: "wf-track" },
      el("div", { class: "wf-wait", style: `left:${pct(b.start)};width:${pct(b.wait)}`, title: `waiting ${fmt(b.wait, 1)} ms` }),
      el("div", { class: "wf-work", style: `left:${pct(b.start + b.wait)};width:${pct(Math.max(b.work, total / 400))}`, title: `working ${fmt(b.work, 1)} ms` })),
    el("span", { class: "muted", text: `wait ${fmt(b.wait, 1)} · work ${fmt(b.work, 1)} ms` })));
  rows.push(el("div", { class: "wf-row wf-total" }, el("span", { text: "total" }), el("span"), el("span", { text: `${fmt(total, 1)} ms` })));
  $("#waterfall").replaceChildren(...rows);
}

function renderTraceExtra(trace) {
  const dl = el("dl", { class: "kv" });
  const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", {}, el("pre", { text: typeof v === "string" ? v : JSON.stringify(v, null, 1) })));
  add("query analysis", { now: trace.now, budget: trace.budget, depth: trace.depth, temporal: trace.temporal, strategy_boosts: trace.strategy_boosts });
  for (const [name, s] of Object.entries(trace.strategies || {})) {
    add(`strategy ${name}`, { hits: (s.hits || []).length, error: s.error, elapsed_ms: s.elapsed_ms, detail: s.detail });
  }
  const decisions = trace.packing || [];
  const counts = {};
  for (const d of decisions) counts[d.outcome] = (counts[d.outcome] || 0) + 1;
  add("packing", counts);
  const known = new Set(["query", "budget", "depth", "now", "temporal", "strategy_boosts", "strategies", "fusion", "rerank", "boosts", "packing", "timings_ms"]);
  for (const [k, v] of Object.entries(trace)) if (!known.has(k)) add(k, v);  // fields added later render as JSON
  $("#trace-extra").replaceChildren(dl);
}

// ---------- fleet ----------
async function loadFleet() {
  $("#fleet-status").textContent = "asking the workers…";
  try {
    const f = await api("/v1/fleet");
    $("#workers tbody").replaceChildren(...(f.workers.length ? f.workers.map((w) => el("tr", { class: "worker-row" },
      el("td", { text: w.name }), el("td", { text: w.node || "–" }), el("td", { class: "num", text: w.pid || "–" }),
      el("td", { class: w.ping ? "ok" : "no", text: w.ping ? "pong" : "no answer" }),
      el("td", { text: w.pool || "–" }), el("td", { class: "num", text: w.concurrency ?? "–" }),
      el("td", { text: (w.queues || []).join(", ") || "–" }))) : [el("tr", {}, el("td", { colspan: 7, class: "muted", text: "no worker answered a ping" }))]));
    $("#queues tbody").replaceChildren(...Object.entries(f.queues).map(([q, n]) =>
      el("tr", {}, el("td", { text: q }), el("td", { class: "num", text: n < 0 ? "broker unreachable" : n }))));
    $("#jobs tbody").replaceChildren(...f.recent_jobs.map((j) => el("tr", { class: "job-row" },
      el("td", { text: (j.job_id || "").slice(0, 8) }), el("td", { text: j.bank_id || "–" }),
      el("td", { class: j.status === "failed" ? "no" : j.status === "succeeded" ? "ok" : "", text: j.status }),
      el("td", { text: j.created_at ? new Date(j.created_at * 1000).toLocaleTimeString() : "–" }),
      el("td", { class: "num", text: j.finished_at && j.created_at ? `${((j.finished_at - j.created_at) * 1000).toFixed(0)} ms` : "–" }),
      el("td", { class: "error", text: j.error ? (j.error.message || j.error.error) : "" }))));
    $("#fleet-status").textContent = ` ${f.workers.length} workers · updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    $("#fleet-status").replaceChildren(el("span", { class: "error", text: err.message }));
  }
}

function showTab(name) {
  for (const a of document.querySelectorAll("nav a.tab")) a.classList.toggle("active", a.dataset.tab === name);
  $("#tab-recall").hidden = name !== "recall";
  $("#tab-fleet").hidden = name !== "fleet";
  if (name === "fleet") loadFleet();
}

document.addEventListener("DOMContentLoaded", () => {
  $("#api-key").value = localStorage.getItem("tempr.key") || "";
  $("#api-key").addEventListener("change", () => { localStorage.setItem("tempr.key", $("#api-key").value); loadBanks(); });
  $("#bank").addEventListener("change", () => loadBank().catch((e) => { $("#bank-info").textContent = e.message; }));
  $("#recall-form").addEventListener("submit", runRecall);
  $("#refresh-fleet").addEventListener("click", loadFleet);
  window.addEventListener("hashchange", () => showTab(location.hash === "#fleet" ? "fleet" : "recall"));
  showTab(location.hash === "#fleet" ? "fleet" : "recall");
  loadBanks();
});
