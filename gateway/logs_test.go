package gateway

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// TestLogsHoldNoText: prompts and outputs may be personal data; no log
// line holds either, in either format, whatever became of the request.
// Latency is in float milliseconds, and an error says its cause once.
func TestLogsHoldNoText(t *testing.T) {
	const marker = "MARKER-7f3a"
	answer := strings.Replace(readFixture(t, "mcq_content_fault.json"), "Python basics", "Python basics "+marker, 1)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			logs := &logBuffer{}
			var h slog.Handler = slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})
			if format == "json" {
				h = slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			up := &scriptedUpstream{answers: []string{answer, readFixture(t, "mcq_valid.json"), answer}}
			ups := httptest.NewServer(up)
			t.Cleanup(ups.Close)
			cfg := config.Default()
			cfg.Upstream, cfg.MaxLLMCalls, cfg.DebugStore = ups.URL, 1, true
			srv, err := Build(cfg, slog.New(h))
			if err != nil {
				t.Fatal(err)
			}
			gw := httptest.NewServer(srv.Handler())
			t.Cleanup(gw.Close)

			hdr := map[string]string{"X-Contract": "mcq", "X-Contract-Report": "corrections"}
			prompt := `{"model":"m","stream":false,"prompt":"` + marker + ` one"}`
			if resp, body := post(t, gw.URL+"/api/generate", prompt, hdr); resp.StatusCode != http.StatusOK {
				t.Fatalf("repaired: %d %s", resp.StatusCode, body)
			}
			if resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"`+marker+` two"}`, hdr); resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("failed: %d %s", resp.StatusCode, body)
			}
			post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"`+marker+` pass"}`, nil)
			up.mu.Lock()
			up.status = http.StatusInternalServerError
			up.mu.Unlock()
			if resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"`+marker+` three"}`, hdr); resp.StatusCode < 500 {
				t.Fatalf("upstream error: %d %s", resp.StatusCode, body)
			}

			out := logs.String()
			if strings.Contains(out, marker) {
				t.Errorf("a log line holds prompt or output text:\n%s", out)
			}
			if strings.Contains(out, "latency=") || strings.Contains(out, `"latency"`) {
				t.Errorf("latency not in milliseconds:\n%s", out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			errors := 0
			for _, l := range lines {
				if format == "json" {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("log line %q: %v", l, err)
					}
					if m["msg"] == "request" || m["msg"] == "guarded request" {
						if _, ok := m["latency_ms"].(float64); !ok {
							t.Errorf("no float latency_ms: %s", l)
						}
					}
					if e, ok := m["error"].(string); ok {
						errors++
						if strings.Count(e, "model runner crashed") > 1 || strings.Count(e, "upstream") > 1 {
							t.Errorf("error repeats itself: %q", e)
						}
					}
				} else if !strings.Contains(l, "latency_ms=") && strings.Contains(l, "request") && strings.Contains(l, "status=") {
					t.Errorf("no latency_ms: %s", l)
				}
			}
			if format == "json" && errors == 0 {
				t.Errorf("no error logged for the upstream failure:\n%s", out)
			}
		})
	}
}
