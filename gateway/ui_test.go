package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/contractgateway/gateway/access"
	"github.com/contractgateway/gateway/config"
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
