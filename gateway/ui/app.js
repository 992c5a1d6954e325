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
        if (!resp.ok) { var err = new Error(path + ": " + (body.error || resp.status)); err.status = resp.status; throw err; }
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
    $("since").textContent = (s.source === "outcomes" ? "every replica (outcome store)" : "this process") + " since " + new Date(s.since).toLocaleString();
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
    // The Ollama servers behind the gateway: which one is out (its last
    // check's error says why), whose breaker is open, where the load is.
    fill("upstreams", (s.upstreams || []).map(function (u) {
      var health = u.healthy ? "healthy" : "unhealthy" + (u.last_error ? ": " + u.last_error : "");
      return [el("td", u.url, "mono"), el("td", health, u.healthy ? "upstream-healthy" : "upstream-unhealthy"),
        el("td", u.breaker, "mono"), el("td", u.in_flight, "num"), el("td", u.requests, "num"), el("td", u.errors, "num"),
        el("td", (u.models || []).length + " (" + u.models_loaded + ")")];
    }), 7);
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
    renderDiff($("diff"), rec.first, rec.final);
  }

  // renderDiff writes the line diff of first against final into pre.
  function renderDiff(pre, first, final) {
    pre.replaceChildren();
    var lines = diffLines(pretty(first).split("\n"), final ? pretty(final).split("\n") : []);
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

  // The trends: the chosen range's counts from /admin/trends, one SVG
  // chart per grouping, drawn here (no library): a column per bucket,
  // stacked by key, each segment carrying its key, bucket and count.
  var RANGES = {
    hour: { ms: 3600e3, step: "1m", stepMs: 60e3 },
    day: { ms: 86400e3, step: "1h", stepMs: 3600e3 },
    week: { ms: 7 * 86400e3, step: "1d", stepMs: 86400e3 }
  };
  var PALETTE = ["#2f6fd6", "#c23b2e", "#23834a", "#b06a00", "#7a4fc9", "#0f8a8a", "#c2408f", "#5b6475", "#8f9a2b", "#d9822b"];
  var STATUS_COLORS = { valid: "#23834a", repaired: "#2f6fd6", fallback: "#b06a00", failed: "#c23b2e", error: "#7a1f16" };
  var SVG = "http://www.w3.org/2000/svg";
  var trendData = {};

  function svgEl(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function drawChart(fig, body, range) {
    var svg = fig.querySelector("svg");
    var legend = fig.querySelector(".legend");
    var step = range.stepMs;
    var first = Math.floor(Date.parse(body.since) / step) * step;
    var buckets = Math.max(1, Math.ceil((Date.parse(body.until) - first) / step));
    var totals = {}, perBucket = new Array(buckets).fill(0);
    body.series.forEach(function (se) {
      totals[se.key] = 0;
      se.points.forEach(function (p) {
        var b = Math.floor((Date.parse(p.t) - first) / step);
        if (b < 0 || b >= buckets) { return; }
        totals[se.key] += p.n;
        perBucket[b] += p.n;
      });
    });
    var keys = Object.keys(totals).sort(function (a, b) { return totals[b] - totals[a] || (a < b ? -1 : 1); });
    var color = function (k) { return (fig.dataset.by === "status" && STATUS_COLORS[k]) || PALETTE[keys.indexOf(k) % PALETTE.length]; };
    var W = Math.max(200, Math.round(svg.getBoundingClientRect().width) || 600), H = 160;
    var padL = 34, padR = 6, padT = 8, padB = 18;
    var plotW = W - padL - padR, plotH = H - padT - padB;
    var top = Math.max(1, Math.max.apply(null, perBucket));
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.replaceChildren();
    var sum = keys.reduce(function (a, k) { return a + totals[k]; }, 0);
    svg.dataset.total = sum;
    svg.appendChild(svgEl("line", { "class": "axis", x1: padL, y1: padT + plotH, x2: W - padR, y2: padT + plotH }));
    svg.appendChild(svgEl("text", { x: padL - 4, y: padT + 8, "text-anchor": "end" }, top));
    svg.appendChild(svgEl("text", { x: padL - 4, y: padT + plotH, "text-anchor": "end" }, 0));
    var label = function (t) {
      var d = new Date(t);
      return range.stepMs >= 86400e3 ? d.toLocaleDateString() : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    };
    svg.appendChild(svgEl("text", { x: padL, y: H - 4 }, label(first)));
    svg.appendChild(svgEl("text", { x: W - padR, y: H - 4, "text-anchor": "end" }, label(first + (buckets - 1) * step)));
    var bw = plotW / buckets;
    var stackY = new Array(buckets).fill(0);
    keys.forEach(function (k) {
      var se = body.series.find(function (x) { return x.key === k; });
      se.points.forEach(function (p) {
        var b = Math.floor((Date.parse(p.t) - first) / step);
        if (b < 0 || b >= buckets || !p.n) { return; }
        var h = plotH * p.n / top;
        stackY[b] += h;
        var r = svgEl("rect", {
          x: (padL + b * bw + bw * 0.1).toFixed(2), y: (padT + plotH - stackY[b]).toFixed(2),
          width: Math.max(1, bw * 0.8).toFixed(2), height: h.toFixed(2), fill: color(k),
          "data-key": k, "data-t": p.t, "data-n": p.n
        });
        r.appendChild(svgEl("title", {}, k + ": " + p.n + " at " + new Date(p.t).toLocaleString()));
        svg.appendChild(r);
      });
    });
    legend.replaceChildren();
    if (!keys.length) { legend.appendChild(el("li", "none in this range", "muted")); }
    keys.forEach(function (k) {
      var li = el("li");
      li.dataset.key = k;
      li.dataset.n = totals[k];
      var sw = svgEl("svg", { viewBox: "0 0 10 10" });
      sw.appendChild(svgEl("rect", { width: 10, height: 10, fill: color(k) }));
      li.appendChild(sw);
      li.appendChild(el("span", (k === "" ? "(none)" : k) + " " + totals[k], "mono"));
      legend.appendChild(li);
    });
  }

  function drawTrends() {
    var range = RANGES[$("range").value];
    document.querySelectorAll("figure.chart").forEach(function (fig) {
      if (trendData[fig.dataset.by]) { drawChart(fig, trendData[fig.dataset.by], range); }
    });
  }

  function loadTrends() {
    var name = $("range").value, range = RANGES[name];
    var until = new Date(Date.now() + 1000), since = new Date(until.getTime() - range.ms);
    var figs = Array.prototype.slice.call(document.querySelectorAll("figure.chart"));
    return Promise.all(figs.map(function (fig) {
      return api("/admin/trends?by=" + fig.dataset.by + "&step=" + range.step + "&since=" + since.toISOString() + "&until=" + until.toISOString());
    })).then(function (bodies) {
      storeOff(false);
      figs.forEach(function (fig, i) { trendData[fig.dataset.by] = bodies[i]; });
      drawTrends();
      $("charts").dataset.range = name;
    }).catch(function (err) {
      if (err.status === 404) { storeOff(true); return; }
      throw err;
    });
  }

  function storeOff(off) {
    $("store-off").hidden = !off;
    $("charts").hidden = off;
    $("outcomes-panel").hidden = off;
  }

  // The outcome log: /admin/outcomes filtered and paged by its cursor.
  var pages = [""], pageNo = 0, nextCursor = "";

  function outcomeQuery(cursor) {
    var q = [];
    [["status", "f-status"], ["contract", "f-contract"], ["model", "f-model"], ["code", "f-code"], ["limit", "f-limit"]].forEach(function (f) {
      var v = $(f[1]).value.trim();
      if (v) { q.push(f[0] + "=" + encodeURIComponent(v)); }
    });
    if (cursor) { q.push("cursor=" + encodeURIComponent(cursor)); }
    return "/admin/outcomes?" + q.join("&");
  }

  function loadOutcomes() {
    if ($("outcomes-panel").hidden) { return Promise.resolve(); }
    return api(outcomeQuery(pages[pageNo])).then(function (body) {
      nextCursor = body.next_cursor || "";
      var tbody = $("outcomes").querySelector("tbody");
      fill("outcomes", body.outcomes.map(function (r) {
        return [el("td", new Date(r.time).toLocaleString()), el("td", r.id, "mono"), el("td", r.contract, "mono"),
          el("td", r.model || "(none)", "mono"), el("td", r.status, "status-" + r.status),
          el("td", r.codes_before.join(", "), "mono"), el("td", r.codes_after.join(", "), "mono"), el("td", r.llm_calls, "num")];
      }), 8);
      Array.prototype.forEach.call(tbody.rows, function (tr, i) {
        var rec = body.outcomes[i];
        if (!rec) { return; }
        tr.dataset.id = rec.id;
        tr.addEventListener("click", function () {
          Array.prototype.forEach.call(tbody.rows, function (x) { x.classList.remove("selected"); });
          tr.classList.add("selected");
          showOutcome(rec);
        });
      });
      $("page-next").disabled = !nextCursor;
      $("page-first").disabled = pageNo === 0;
      $("page-info").textContent = "page " + (pageNo + 1) + ", " + body.outcomes.length + " shown";
      $("outcomes").dataset.page = pageNo + 1;
      $("outcomes").dataset.rows = body.outcomes.length;
    });
  }

  function showOutcome(rec) {
    $("outcome-detail").hidden = false;
    $("outcome-id").textContent = rec.id;
    var has = !!(rec.first_text || rec.final_text);
    $("outcome-notext").hidden = has;
    var pre = $("outcome-diff");
    if (has) { renderDiff(pre, rec.first_text, rec.final_text); } else { pre.replaceChildren(); }
    pre.dataset.id = rec.id;
  }

  function load() {
    $("error").hidden = true;
    return api("/admin/stats").then(function (s) {
      $("login").hidden = true;
      $("dashboard").hidden = false;
      render(s);
      return loadTrends();
    }).then(function () {
      return loadOutcomes();
    }).then(function () {
      if (!$("debug-on").hidden) { return loadDebug(); }
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
  var showError = function (err) { $("error").textContent = err.message; $("error").hidden = false; };
  $("range").addEventListener("change", function () { loadTrends().catch(showError); });
  $("outcome-filters").addEventListener("submit", function (ev) {
    ev.preventDefault();
    pages = [""]; pageNo = 0;
    loadOutcomes().catch(showError);
  });
  $("page-next").addEventListener("click", function () {
    if (!nextCursor) { return; }
    pages = pages.slice(0, pageNo + 1).concat([nextCursor]);
    pageNo++;
    loadOutcomes().catch(showError);
  });
  $("page-first").addEventListener("click", function () { pageNo = 0; loadOutcomes().catch(showError); });
  var resizing;
  window.addEventListener("resize", function () { clearTimeout(resizing); resizing = setTimeout(drawTrends, 100); });
  setInterval(function () { if (!$("dashboard").hidden) { load(); } }, 15000);
  load();
})();
