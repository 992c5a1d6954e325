"use strict";
(function () {
  var TOKEN_KEY = "contract-gateway-admin-token";
  var $ = function (id) { return document.getElementById(id); };

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

  function api(path) {
    var headers = {};
    if (token()) { headers.Authorization = "Bearer " + token(); }
    return fetch(path, { headers: headers }).then(function (resp) {
      if (resp.status === 401) { var e = new Error("unauthorized"); e.unauthorized = true; throw e; }
      return resp.json().then(function (body) {
        if (!resp.ok) { throw new Error(path + ": " + (body.error || resp.status)); }
        return body;
      });
    });
  }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }

  function fill(tableId, rows, columns) {
    var tbody = $(tableId).querySelector("tbody");
    tbody.replaceChildren();
    if (rows.length === 0) {
      var tr = el("tr");
      var td = el("td", "none yet", "empty");
      td.colSpan = columns;
      tr.appendChild(td);
      tbody.appendChild(tr);
      return;
    }
    rows.forEach(function (cells) {
      var tr = el("tr");
      cells.forEach(function (c) { tr.appendChild(c); });
      tbody.appendChild(tr);
    });
  }

  function barRows(counts) {
    var keys = Object.keys(counts || {}).sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : 1); });
    var top = keys.length ? counts[keys[0]] : 1;
    return keys.map(function (k) {
      var bar = el("td", null, "bar");
      var d = el("div");
      d.style.width = Math.max(2, Math.round(100 * counts[k] / top)) + "%";
      bar.appendChild(d);
      return [el("td", k === "" ? "(none)" : k, "mono"), el("td", counts[k], "num"), bar];
    });
  }

  function pct(x) { return (Math.round(x * 1000) / 10) + "%"; }

  function render(s) {
    $("since").textContent = "since " + new Date(s.since).toLocaleString();
    $("stat-requests").textContent = s.requests;
    $("stat-statuses").textContent = Object.keys(s.by_status).sort().map(function (k) { return s.by_status[k] + " " + k; }).join(", ");
    $("stat-llm-first").textContent = s.llm_calls.first;
    $("stat-llm-repair").textContent = s.llm_calls.repair;
    $("stat-saved").textContent = s.llm_calls.saved_by_local_repair;
    $("stat-local-fixes").textContent = s.local_fixes;
    var looked = s.cache.hit + s.cache.miss;
    $("stat-cache-rate").textContent = looked ? pct(s.cache.hit_rate) : "–";
    $("stat-cache").textContent = s.cache.hit + " hit, " + s.cache.miss + " miss, " + s.cache.bypass + " bypass";
    $("stat-tokens-first").textContent = s.tokens.first_prompt + s.tokens.first_output;
    $("stat-tokens-repair").textContent = s.tokens.repair_prompt + s.tokens.repair_output;
    $("stat-latency").textContent = s.latency_ms.samples ? [s.latency_ms.p50, s.latency_ms.p90, s.latency_ms.p99].map(function (x) { return x.toFixed(1); }).join(" / ") : "–";
    $("stat-samples").textContent = s.latency_ms.samples;
    // A route over a model the upstream lacks fails every request: its
    // state says so, with the command that pulls the model.
    fill("routes", (s.routes || []).map(function (r) {
      var label = { ready: "ready", upstream_model_missing: "upstream model missing", unknown: "unknown" }[r.state] || r.state;
      return [el("td", r.model, "mono"), el("td", r.upstream_model, "mono"), el("td", r.contract, "mono"),
        el("td", label, "route-" + r.state), el("td", r.fix || "", "mono")];
    }), 5);
    // Every request by API key, when access keys are configured: what
    // each key asked, what was refused and why, the tokens it was charged.
    var counts = function (m) {
      return Object.keys(m || {}).sort().map(function (k) { return m[k] + " " + k; }).join(", ");
    };
    $("keys-panel").hidden = !s.keys;
    fill("keys", Object.keys(s.keys || {}).sort().map(function (name) {
      var k = s.keys[name];
      return [el("td", name || "(no key)", "mono"), el("td", k.requests, "num"), el("td", counts(k.by_status)),
        el("td", counts(k.refused)), el("td", k.tokens, "num")];
    }), 5);
    fill("by-code", barRows(s.violations_by_code), 3);
    fill("by-model", barRows(s.violations_by_model), 3);
    fill("rungs", barRows(s.rungs), 3);
    fill("counts", s.counts.map(function (r) {
      return [el("td", r.contract, "mono"), el("td", r.model || "(none)", "mono"), el("td", r.status, "status-" + r.status), el("td", r.count, "num")];
    }), 4);
    fill("failures", s.recent_failures.slice().reverse().map(function (f) {
      return [el("td", new Date(f.time).toLocaleTimeString()), el("td", f.request_id, "mono"), el("td", f.contract, "mono"),
        el("td", f.model || "(none)", "mono"), el("td", f.status, "status-" + f.status), el("td", f.codes.join(", ") || f.error || "", "mono")];
    }), 6);
    $("debug-off").hidden = !!s.debug_store.enabled;
    $("debug-on").hidden = !s.debug_store.enabled;
  }

  // pretty indents a JSON text, inside its fence when it has one (a fenced
  // answer, or a redacted one, which the store keeps compact).
  function pretty(text) {
    var m = /^(```(?:json)?\n)([\s\S]*)(\n```)$/.exec(text || "");
    try {
      var body = JSON.stringify(JSON.parse(m ? m[2] : text), null, 2);
      return m ? m[1] + body + m[3] : body;
    } catch (e) { return text; }
  }

  // diffLines is a longest-common-subsequence line diff.
  function diffLines(a, b) {
    var n = a.length, m = b.length, i, j;
    if (n * m > 4000000) { return a.map(function (l) { return ["-", l]; }).concat(b.map(function (l) { return ["+", l]; })); }
    var dp = [];
    for (i = 0; i <= n; i++) { dp.push(new Uint32Array(m + 1)); }
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
      }
    }
    var out = [];
    i = 0; j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
      else if (dp[i + 1][j] >= dp[i][j + 1]) { out.push(["-", a[i++]]); }
      else { out.push(["+", b[j++]]); }
    }
    while (i < n) { out.push(["-", a[i++]]); }
    while (j < m) { out.push(["+", b[j++]]); }
    return out;
  }

  function show(rec) {
    fill("corrections", (rec.corrections || []).map(function (c) {
      return [el("td", c.path || "(document)", "mono"), el("td", c.rung), el("td", c.kind, "kind-" + c.kind),
        el("td", JSON.stringify(c.before), "mono"), el("td", JSON.stringify(c.after), "mono")];
    }), 5);
    var pre = $("diff");
    pre.replaceChildren();
    var lines = diffLines(pretty(rec.first).split("\n"), rec.final ? pretty(rec.final).split("\n") : []);
    // Unchanged runs are folded to three lines of context on each side.
    var CONTEXT = 3;
    var changed = lines.map(function (l) { return l[0] !== " "; });
    var near = function (i) {
      for (var k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) { if (changed[k]) { return true; } }
      return false;
    };
    var anyChange = changed.indexOf(true) >= 0;
    var folded = 0;
    var flush = function () {
      if (folded) { pre.appendChild(el("span", "⋯ " + folded + " unchanged line" + (folded > 1 ? "s" : ""), "fold")); folded = 0; }
    };
    lines.forEach(function (l, i) {
      if (anyChange && !near(i)) { folded++; return; }
      flush();
      pre.appendChild(el("span", l[0] + " " + l[1], l[0] === "-" ? "del" : l[0] === "+" ? "add" : ""));
    });
    flush();
  }

  function loadDebug() {
    return api("/admin/requests?limit=50").then(function (body) {
      var sel = $("debug-select");
      var keep = sel.value;
      sel.replaceChildren();
      body.requests.forEach(function (r) {
        var o = el("option", r.request_id + " — " + r.contract + " · " + r.model + " · " + r.status);
        o.value = r.request_id;
        sel.appendChild(o);
      });
      if (!body.requests.length) { $("diff").textContent = "No request kept yet."; return; }
      var pick = body.requests.find(function (r) { return r.request_id === keep; }) ||
        body.requests.find(function (r) { return r.status !== "valid"; }) || body.requests[0];
      sel.value = pick.request_id;
      return api("/admin/requests/" + encodeURIComponent(pick.request_id)).then(show);
    });
  }

  function load() {
    $("error").hidden = true;
    return api("/admin/stats").then(function (s) {
      $("login").hidden = true;
      $("dashboard").hidden = false;
      render(s);
      if (s.debug_store.enabled) { return loadDebug(); }
    }).then(function () {
      document.body.dataset.loaded = "true";
    }).catch(function (err) {
      if (err.unauthorized) {
        $("dashboard").hidden = true;
        $("login").hidden = false;
        $("login-error").textContent = token() ? "That token was refused." : "";
        $("token").focus();
        return;
      }
      $("error").textContent = err.message;
      $("error").hidden = false;
    });
  }

  $("login").addEventListener("submit", function (ev) {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    $("token").value = "";
    load();
  });
  $("forget").addEventListener("click", function () { sessionStorage.removeItem(TOKEN_KEY); load(); });
  $("refresh").addEventListener("click", load);
  $("debug-select").addEventListener("change", function () {
    api("/admin/requests/" + encodeURIComponent($("debug-select").value)).then(show).catch(function (err) {
      $("error").textContent = err.message;
      $("error").hidden = false;
    });
  });
  setInterval(function () { if (!$("dashboard").hidden) { load(); } }, 15000);
  load();
})();
