// The dashboard reads the gateway's own /admin/stats with the admin token,
// asked once and kept for the tab's session. Every value is set as text:
// model names and codes come from clients.
"use strict";

const $ = (id) => document.getElementById(id);

function token() { return sessionStorage.getItem("cg-admin-token") || ""; }

function cell(row, text, num) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (num) td.className = "num";
  row.appendChild(td);
}

function fill(id, rows) {
  const body = $(id).querySelector("tbody");
  body.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement("tr");
    r.forEach((v) => cell(tr, v, typeof v === "number"));
    body.appendChild(tr);
  }
}

function render(s) {
  $("since").textContent = "since " + new Date(s.since).toLocaleString();
  $("requests").textContent = s.requests;
  $("llm_calls").textContent = s.llm_calls;
  $("local_fixes").textContent = s.local_fixes;
  $("saved").textContent = s.llm_calls_saved_by_local_repair;
  $("hit_rate").textContent = Math.round(100 * s.cache_hit_rate) + " %";
  $("repair_tokens").textContent = s.tokens.repair_prompt + s.tokens.repair_output;
  $("p50").textContent = (s.latency_ms.p50 ?? 0).toFixed(1) + " / " + (s.latency_ms.p99 ?? 0).toFixed(1);

  const codes = new Map();
  for (const c of s.counts) {
    if (c.code === "") continue;
    const e = codes.get(c.code) || { n: 0, ok: 0, bad: 0 };
    e.n += c.count;
    if (c.status === "valid" || c.status === "repaired") e.ok += c.count; else e.bad += c.count;
    codes.set(c.code, e);
  }
  const models = new Map(Object.entries(s.by_model).map(([m, st]) =>
    [m, Object.assign({ n: Object.values(st).reduce((a, b) => a + b, 0) }, st)]));
  fill("by_code", [...codes].sort((a, b) => b[1].n - a[1].n).map(([k, e]) => [k, e.n, e.ok, e.bad]));
  fill("by_model", [...models].map(([k, m]) => [k || "(unknown)", m.n, m.valid || 0, m.repaired || 0, m.fallback || 0, m.failed || 0, m.error || 0]));
  fill("rungs", Object.entries(s.accepted_by_rung).sort((a, b) => b[1] - a[1]));
  fill("failures", s.recent_failures.slice().reverse().map((f) =>
    [new Date(f.time).toLocaleTimeString(), f.request_id, f.model, f.contract, f.status, (f.codes || []).join(", ")]));
}

async function load() {
  const res = await fetch("/admin/stats", { headers: token() ? { Authorization: "Bearer " + token() } : {} });
  if (res.status === 401) {
    $("login").hidden = false;
    $("board").hidden = true;
    $("status").textContent = token() ? "wrong token" : "";
    return;
  }
  if (!res.ok) {
    $("status").textContent = "stats: " + res.status;
    return;
  }
  $("login").hidden = true;
  $("board").hidden = false;
  $("status").textContent = "updated " + new Date().toLocaleTimeString();
  render(await res.json());
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("cg-admin-token", $("token").value);
  load();
});

load();
setInterval(load, 5000);
