package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
)

// browser starts a headless Chromium with a temporary profile, or skips
// when there is none (unless CG_REQUIRE_BROWSER=1). It returns the
// browser's context and the console errors seen so far.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CG_REQUIRE_BROWSER") == "1" {
			t.Fatal("chromium not found and CG_REQUIRE_BROWSER=1 (scripts/install-browser.sh installs it)")
		}
		t.Skip("chromium not found (scripts/install-browser.sh installs it)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1500),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(func() {
		// Close the browser and wait for it before the profile is removed.
		_ = chromedp.Cancel(ctx)
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})

	var mu sync.Mutex
	var errs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				errs = append(errs, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			errs = append(errs, "exception: "+ev.ExceptionDetails.Error())
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), errs...)
	}
}

func TestDashboard(t *testing.T) {
	url, _ := scriptedStatsGateway(t, func(c *config.Config) {
		c.DebugStore = true
		// The upstream lists no models: the route's model is missing.
		c.Routes = []config.Route{{Model: "quiz", Upstream: "llama3.2", Contract: "json"}}
		// Keys exist, and the scripted requests, which send none, come in
		// through the anonymous policy: the keys table counts them, and the
		// tokens it was charged are the guard's, first answers and repairs.
		c.Access = config.Access{
			Keys:      []config.AccessKey{{Name: "quiz-app", SHA256: access.Hash(quizSecret)}},
			Anonymous: &config.AccessScope{},
		}
	})
	ctx, consoleErrors := browser(t)

	// The page itself needs no token; its data does.
	resp, body := get(t, url+"/ui/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "/ui/app.js") {
		t.Fatalf("GET /ui/: %d %s", resp.StatusCode, body)
	}

	var loginShown bool
	steps := []struct {
		name string
		act  chromedp.Action
	}{
		{"navigate", chromedp.Navigate(url + "/ui")},
		{"login form", chromedp.WaitVisible("#token", chromedp.ByQuery)},
		{"login only", chromedp.Evaluate(`!document.getElementById("login").hidden && document.getElementById("dashboard").hidden`, &loginShown)},
		{"type token", chromedp.SendKeys("#token", statsToken, chromedp.ByQuery)},
		{"submit", chromedp.Click("#login-submit", chromedp.ByQuery)},
		{"stats", chromedp.WaitVisible(`body[data-loaded="true"]`, chromedp.ByQuery)},
		{"diff", chromedp.WaitVisible(`#diff span`, chromedp.ByQuery)},
	}
	for _, st := range steps {
		if err := chromedp.Run(ctx, st.act); err != nil {
			t.Fatalf("dashboard, %s: %v (console: %q)", st.name, err, consoleErrors())
		}
	}
	if !loginShown {
		t.Error("the page did not ask for the token first")
	}

	text := func(sel string) string {
		var s string
		if err := chromedp.Run(ctx, chromedp.Text(sel, &s, chromedp.ByQuery)); err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	wants := map[string]string{
		"#stat-requests":      "5",
		"#stat-statuses":      "1 failed, 2 repaired, 2 valid",
		"#stat-llm-first":     "4",
		"#stat-llm-repair":    "2",
		"#stat-saved":         "1",
		"#stat-cache-rate":    "20%",
		"#stat-cache":         "1 hit, 4 miss, 0 bypass",
		"#stat-tokens-first":  "196",
		"#stat-tokens-repair": "98",
		"#stat-samples":       "5",
	}
	for sel, want := range wants {
		if got := text(sel); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	rows := func(table string) []string {
		var out []string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`Array.from(document.querySelectorAll("#`+table+` tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent).filter(Boolean).join(" "))`, &out)); err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func(table string, want []string) {
		t.Helper()
		if got := rows(table); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("#%s rows = %q, want %q", table, got, want)
		}
	}
	check("routes", []string{"quiz llama3.2 json@1 upstream model missing OLLAMA_HOST=http://127.0.0.1:11435 ollama pull llama3.2"})
	check("keys", []string{"anonymous 5 4 200, 1 422 294"})
	if u := rows("upstreams"); len(u) != 1 || !strings.HasPrefix(u[0], "http://127.0.0.1:") || !strings.Contains(u[0], " healthy closed 0 ") {
		t.Errorf("#upstreams rows = %q, want the one upstream, healthy, its breaker closed, nothing in flight", u)
	}
	check("by-code", []string{"ANSWER_RANGE 2", "JSON_SYNTAX 1"})
	check("by-model", []string{"m 3"})
	check("rungs", []string{"cache 1", "failed 1", "first 1", "llm_repair 1", "local 1"})
	check("counts", []string{"mcq@1 m failed 1", "mcq@1 m repaired 2", "mcq@1 m valid 2"})
	if f := rows("failures"); len(f) != 1 || !strings.Contains(f[0], "failed ANSWER_RANGE") {
		t.Errorf("#failures rows = %q", f)
	}
	// The newest request that was not valid as written is shown: the
	// failed one, whose first answer has answer 7 and no final text.
	check("corrections", []string{"none yet"})
	var diff string
	if err := chromedp.Run(ctx, chromedp.Text("#diff", &diff, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	if !diffHas(diff, "-", `"answer": 7,`) {
		t.Errorf("diff does not show the first answer removed:\n%.400s", diff)
	}
	// Another request: the one repaired by a repair call.
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const s = document.getElementById("debug-select"); s.selectedIndex = 1; s.dispatchEvent(new Event("change")); })()`, nil),
		chromedp.WaitVisible(`#corrections td.kind-major`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	check("corrections", []string{"questions[0].answer llm_repair major 7 0"})
	if err := chromedp.Run(ctx, chromedp.Text("#diff", &diff, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	if !diffHas(diff, "-", `"answer": 7,`) || !diffHas(diff, "+", `"answer": 0,`) {
		t.Errorf("diff does not show the repair:\n%.600s", diff)
	}

	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "ui-screenshot.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(os.TempDir(), "ui-screenshot.png"), png, 0o644)

	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	// The data stays behind the token.
	resp, _ = get(t, url+"/admin/requests")
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /admin/requests without token: %d", resp.StatusCode)
	}
}

// diffHas says whether a line of the dashboard's diff starts with mark and
// holds s.
func diffHas(diff, mark, s string) bool {
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, mark) && strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// TestDashboardOutcomes drives the dashboard's outcome store views in
// Chromium with scripted traffic: twelve guarded requests (2 valid, 2
// repaired, 8 failed over models m and n) through one gateway, read
// through another on the same SQLite file. The charts' SVG segments add
// up to the counts sent in each range, the failure list pages by its
// cursor and filters, a request's before/after is shown, and the page
// never scrolls sideways at 1000, 1400 or 1920 px.
func TestDashboardOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outcomes.db")
	valid, fault := readFixture(t, "mcq_valid.json"), readFixture(t, "mcq_content_fault.json")
	up := &scriptedUpstream{answers: []string{valid, readFixture(t, "mcq_derivable.txt"), fault, valid, fault}}
	ups := httptest.NewServer(up)
	defer ups.Close()
	start := func() (*Server, *httptest.Server) {
		cfg := config.Default()
		cfg.Upstream, cfg.MaxLLMCalls, cfg.AdminToken, cfg.DebugStore = ups.URL, 1, statsToken, true
		cfg.Outcomes.SQLite = path
		srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		return srv, httptest.NewServer(srv.Handler())
	}
	srv, gw := start()
	type req struct{ prompt, model string }
	reqs := []req{{"one", "m"}, {"two", "m"}, {"three", "m"}, {"four", "m"}, {"one", "m"}}
	for i := range 7 {
		reqs = append(reqs, req{fmt.Sprintf("fail %d", i), []string{"n", "m"}[i%2]})
	}
	for i, r := range reqs {
		resp, body := post(t, gw.URL+"/api/generate", `{"model":"`+r.model+`","stream":false,"prompt":"`+r.prompt+`"}`,
			map[string]string{"X-Contract": "mcq"})
		if want := map[bool]int{true: 422, false: 200}[i == 3 || i > 4]; resp.StatusCode != want {
			t.Fatalf("request %d: status %d: %s", i, resp.StatusCode, body)
		}
	}
	gw.Close()
	srv.Close() // writes what is queued
	srv, gw = start()
	defer srv.Close()
	defer gw.Close()

	ctx, consoleErrors := browser(t)
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("dashboard, %s: %v (console: %q)", what, err, consoleErrors())
		}
	}
	run("login",
		chromedp.Navigate(gw.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", statsToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible(`body[data-loaded="true"]`, chromedp.ByQuery),
	)

	// What every chart shows: per key, the sum of its SVG segments, the
	// legend's count, and the chart's total.
	const chartsJS = `Object.fromEntries(Array.from(document.querySelectorAll("figure.chart")).map(f => {
		const sums = {};
		f.querySelectorAll("svg rect[data-key]").forEach(r => { sums[r.dataset.key] = (sums[r.dataset.key] || 0) + Number(r.dataset.n); });
		const legend = {};
		f.querySelectorAll(".legend li[data-key]").forEach(li => { legend[li.dataset.key] = Number(li.dataset.n); });
		return [f.dataset.by, {bars: sums, legend: legend, total: Number(f.querySelector("svg").dataset.total)}];
	}))`
	type chart struct {
		Bars   map[string]int `json:"bars"`
		Legend map[string]int `json:"legend"`
		Total  int            `json:"total"`
	}
	counts := map[string]map[string]int{
		"status":   {"valid": 2, "repaired": 2, "failed": 8},
		"code":     {"ANSWER_RANGE": 9, "JSON_SYNTAX": 1},
		"model":    {"m": 8, "n": 4},
		"contract": {"mcq@1": 12},
	}
	want := map[string]chart{}
	for by, c := range counts {
		total := 0
		for _, n := range c {
			total += n
		}
		want[by] = chart{Bars: c, Legend: c, Total: total}
	}
	for _, rng := range []string{"day", "hour", "week"} {
		run("range "+rng,
			chromedp.SetValue("#range", rng, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("range").dispatchEvent(new Event("change"))`, nil),
			chromedp.WaitReady(`#charts[data-range="`+rng+`"]`, chromedp.ByQuery),
		)
		var got map[string]chart
		run("charts "+rng, chromedp.Evaluate(chartsJS, &got))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("charts of the last %s (-want +got):\n%s", rng, diff)
		}
	}

	// The failure list: paged by five, then filtered.
	ids := func() []string {
		var out []string
		run("rows", chromedp.Evaluate(`Array.from(document.querySelectorAll("#outcomes tbody tr[data-id]")).map(r => r.dataset.id)`, &out))
		return out
	}
	filter := func(what, status, model, code, limit string, wait string) {
		t.Helper()
		set := fmt.Sprintf(`(() => { const v = {"f-status": %q, "f-model": %q, "f-code": %q, "f-limit": %q};
			for (const id in v) { document.getElementById(id).value = v[id]; }
			document.getElementById("outcomes").dataset.page = ""; })()`, status, model, code, limit)
		run(what,
			chromedp.Evaluate(set, nil),
			chromedp.Click("#f-apply", chromedp.ByQuery),
			chromedp.WaitReady(wait, chromedp.ByQuery),
		)
	}
	filter("first page of failures", "failed", "", "", "5", `#outcomes[data-page="1"][data-rows="5"]`)
	page1 := ids()
	var nextDisabled bool
	run("next page",
		chromedp.Click("#page-next", chromedp.ByQuery),
		chromedp.WaitReady(`#outcomes[data-page="2"][data-rows="3"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("page-next").disabled`, &nextDisabled),
	)
	page2 := ids()
	seen := map[string]bool{}
	for _, id := range append(page1, page2...) {
		seen[id] = true
	}
	if len(page1) != 5 || len(page2) != 3 || len(seen) != 8 || !nextDisabled {
		t.Errorf("failure pages %q then %q (next disabled %v), want 8 distinct failures in 5 and 3, no page after", page1, page2, nextDisabled)
	}
	filter("failures of model n", "failed", "n", "", "25", `#outcomes[data-page="1"][data-rows="4"]`)
	filter("any status with JSON_SYNTAX", "", "", "JSON_SYNTAX", "25", `#outcomes[data-page="1"][data-rows="1"]`)

	// Before and after of a request repaired by a repair call.
	filter("repaired with ANSWER_RANGE", "repaired", "", "ANSWER_RANGE", "25", `#outcomes[data-page="1"][data-rows="1"]`)
	var diff string
	run("before/after",
		chromedp.Click(`#outcomes tbody tr[data-id]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#outcome-diff span`, chromedp.ByQuery),
		chromedp.Text("#outcome-diff", &diff, chromedp.ByQuery),
	)
	if !diffHas(diff, "-", `"answer": 7,`) || !diffHas(diff, "+", `"answer": 0,`) {
		t.Errorf("the outcome's before/after does not show the repair:\n%.600s", diff)
	}

	var png []byte
	run("screenshot", chromedp.FullScreenshot(&png, 100))
	_ = os.WriteFile(filepath.Join(os.TempDir(), "ui-outcomes-screenshot.png"), png, 0o644)

	for _, width := range []int64{1000, 1400, 1920} {
		var fits bool
		run(fmt.Sprint("width ", width),
			chromedp.EmulateViewport(width, 900),
			chromedp.Evaluate(`document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth`, &fits),
		)
		if !fits {
			var sw, cw int
			chromedp.Run(ctx, chromedp.Evaluate(`document.scrollingElement.scrollWidth`, &sw), chromedp.Evaluate(`document.scrollingElement.clientWidth`, &cw))
			var wide []string
			chromedp.Run(ctx, chromedp.Evaluate(`(() => { const out = []; const cw = document.scrollingElement.clientWidth;
				document.querySelectorAll("*").forEach(e => { if (e.getBoundingClientRect().right > cw || e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === "visible" && e.clientWidth > 0) { out.push(e.tagName + "#" + e.id + " right " + Math.round(e.getBoundingClientRect().right) + " sw " + e.scrollWidth + " cw " + e.clientWidth); } });
				const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); let n;
				while ((n = w.nextNode())) { const r = document.createRange(); r.selectNodeContents(n); const b = r.getBoundingClientRect(); if (b.right > cw) { out.push("text " + JSON.stringify(n.textContent.slice(0, 40)) + " " + Math.round(b.right)); } }
				return out; })()`, &wide))
			t.Errorf("at %d px the page scrolls sideways: scrollWidth %d > clientWidth %d; beyond it: %q", width, sw, cw, wide)
		}
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
