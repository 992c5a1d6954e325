package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/debugstore"
)

// debugGateway is a guarded gateway with the debug store on in front of a
// scripted upstream answering answers in turn.
func debugGateway(t *testing.T, answers ...string) string {
	t.Helper()
	gw := newGuardedGateway(t, &scriptedUpstream{answers: answers}, func(c *config.Config) {
		c.MaxLLMCalls, c.AdminToken, c.DebugStore = 1, statsToken, true
	})
	return gw.URL
}

// guardedAs sends one guarded request with the given X-Request-Id and
// returns the id the gateway answered with.
func guardedAs(t *testing.T, url, id, prompt string) string {
	t.Helper()
	resp, body := post(t, url+"/api/generate", `{"model":"m","stream":false,"prompt":"`+prompt+`"}`,
		map[string]string{"X-Contract": "mcq", "X-Request-Id": id})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("request %q: %d %s", id, resp.StatusCode, body)
	}
	return resp.Header.Get("X-Request-Id")
}

// TestDebugStoreOpensEscapedIDs opens records whose ids hold ":", "/",
// "+", "=" and "%" through the real handler, as the dashboard asks for
// them (encodeURIComponent) and, where the URL allows it, unescaped.
func TestDebugStoreOpensEscapedIDs(t *testing.T) {
	url := debugGateway(t, readFixture(t, "mcq_valid.json"))
	tests := []struct {
		id    string
		paths []string // the id as it is put in the URL
	}{
		{"trace:1", []string{"trace%3A1", "trace:1"}},
		{"a/b/c", []string{"a%2Fb%2Fc", "a/b/c"}},
		{"k+v==", []string{"k%2Bv%3D%3D", "k+v=="}},
		{"50%off", []string{"50%25off"}},
		{"x:y/z+w=", []string{"x%3Ay%2Fz%2Bw%3D", "x:y/z+w="}},
	}
	for i, tt := range tests {
		if got := guardedAs(t, url, tt.id, strings.Repeat("p", i+1)); got != tt.id {
			t.Fatalf("X-Request-Id %q answered as %q", tt.id, got)
		}
	}
	for _, tt := range tests {
		for _, p := range tt.paths {
			var rec debugstore.Record
			adminGet(t, url+"/admin/requests/"+p, &rec)
			if rec.RequestID != tt.id || rec.Status != "valid" {
				t.Errorf("GET /admin/requests/%s = record %q (%s), want %q", p, rec.RequestID, rec.Status, tt.id)
			}
		}
	}
}

// TestDebugStoreReusedRequestID sends two guarded requests with one
// X-Request-Id: the second is given an id of its own, and each id the
// clients got back opens that client's record.
func TestDebugStoreReusedRequestID(t *testing.T) {
	valid, derivable := readFixture(t, "mcq_valid.json"), readFixture(t, "mcq_derivable.txt")
	url := debugGateway(t, valid, derivable)
	first := guardedAs(t, url, "reused", "one")
	second := guardedAs(t, url, "reused", "two")
	if first != "reused" {
		t.Errorf("first request answered as %q, want its own id", first)
	}
	if second == "" || second == first {
		t.Fatalf("second request answered as %q, want a fresh id", second)
	}
	for _, tt := range []struct {
		id, first, status string
	}{
		{first, valid, "valid"},
		{second, derivable, "repaired"},
	} {
		var rec debugstore.Record
		adminGet(t, url+"/admin/requests/"+tt.id, &rec)
		if rec.RequestID != tt.id || rec.First != tt.first || rec.Status != tt.status {
			t.Errorf("record of %q: id %q, status %q, own first answer: %v", tt.id, rec.RequestID, rec.Status, rec.First == tt.first)
		}
	}
	var all struct{ Requests []debugstore.Summary }
	adminGet(t, url+"/admin/requests", &all)
	if len(all.Requests) != 2 {
		t.Errorf("list = %+v, want both requests", all.Requests)
	}
}

// TestDashboardOpensEscapedID loads the dashboard with a kept request
// whose id holds ":", "/", "+" and "=": its record opens, no error shows.
func TestDashboardOpensEscapedID(t *testing.T) {
	url := debugGateway(t, readFixture(t, "mcq_content_fault.json"))
	const id = "ui:a/b+c="
	resp, body := post(t, url+"/api/generate", `{"model":"m","stream":false,"prompt":"q"}`,
		map[string]string{"X-Contract": "mcq", "X-Request-Id": id})
	if resp.StatusCode != http.StatusUnprocessableEntity || resp.Header.Get("X-Request-Id") != id {
		t.Fatalf("request: %d, id %q: %s", resp.StatusCode, resp.Header.Get("X-Request-Id"), body)
	}
	ctx, consoleErrors := browser(t)
	var settled bool
	var errText, selected string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/ui"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", statsToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		// Loaded, or failed: whichever comes first.
		chromedp.Poll(`document.body.dataset.loaded === "true" || !document.getElementById("error").hidden`, &settled),
		chromedp.Evaluate(`document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`, &errText),
		chromedp.Evaluate(`document.getElementById("debug-select").value`, &selected),
	); err != nil {
		t.Fatalf("dashboard: %v (console: %q)", err, consoleErrors())
	}
	if errText != "" {
		t.Fatalf("dashboard shows an error: %s", errText)
	}
	var diff string
	if err := chromedp.Run(ctx, chromedp.Text("#diff", &diff, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	if selected != id || !diffHas(diff, "-", `"answer": 7,`) {
		t.Errorf("selected %q, diff:\n%.300s", selected, diff)
	}
}
