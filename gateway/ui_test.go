package gateway

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/contractgateway/gateway/config"
)

// chromium finds Debian's chromium, or skips (fails with
// CG_REQUIRE_BROWSER=1).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CG_REQUIRE_BROWSER") == "1" {
		t.Fatal("chromium not found and CG_REQUIRE_BROWSER=1 (scripts/install-browser.sh installs it)")
	}
	t.Skip("chromium not found (scripts/install-browser.sh installs it)")
	return ""
}

// TestDashboardInBrowser loads /ui in a real headless Chromium after
// scripted requests: the page asks for the admin token, then shows the
// exact counts, with no console error; a screenshot is kept in the test's
// temp dir.
func TestDashboardInBrowser(t *testing.T) {
	bin := chromium(t)
	up := &scriptedUpstream{answers: []string{
		readFixture(t, "mcq_valid.json"), readFixture(t, "mcq_derivable.txt"),
		readFixture(t, "mcq_content_fault.json"), readFixture(t, "mcq_valid.json"),
	}}
	gw := newGuardedGateway(t, up, func(c *config.Config) { c.AdminToken = "s3cret" })
	for _, p := range []string{"one", "two", "three", "one"} {
		post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"`+p+`","stream":false}`, map[string]string{"X-Contract": "mcq"})
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()

	var mu sync.Mutex
	var problems []string
	// Listening starts the browser; the page's first events are heard.
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, "console.error")
			}
		}
	}); err != nil {
		t.Fatal(err)
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(gw.URL+"/ui"),
		chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#token", "s3cret"),
		chromedp.Click("#login button"),
		chromedp.WaitVisible("#board"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("requests").textContent !== "–"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		mu.Lock()
		t.Fatalf("%v; console %v; page:\n%s", err, problems, body)
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	requests, calls, saved, hitRate := text("#requests"), text("#llm_calls"), text("#saved"), text("#hit_rate")
	byModel, rungs := text("#by_model tbody"), text("#rungs tbody")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("CG_SCREENSHOT_DIR"); dir != "" {
		os.WriteFile(filepath.Join(dir, "dashboard.png"), shot, 0o644)
	}
	t.Logf("screenshot: %s", path)
	if requests != "4" || calls != "1" || saved != "1" || hitRate != "25 %" {
		t.Errorf("cards: requests %q, model calls %q, saved %q, hit rate %q; want 4, 1, 1, 25 %%", requests, calls, saved, hitRate)
	}
	// m: 4 requests, 2 valid (one a cache hit), 2 repaired.
	if !strings.Contains(strings.Join(strings.Fields(byModel), " "), "m 4 2 2 0 0 0") {
		t.Errorf("by model %q, want the row m 4 2 2 0 0 0", byModel)
	}
	if !strings.Contains(rungs, "llm_repair_scoped") || !strings.Contains(rungs, "cache") {
		t.Errorf("rungs %q, want llm_repair_scoped and cache", rungs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console problems: %v", problems)
	}
}
