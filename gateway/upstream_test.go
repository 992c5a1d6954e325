package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/middleware/route"
)

// TestUpstreamErrorsOneReading: the model routes and /readyz read the
// upstream's failures as the guard does, through the one upstream client:
// Ollama's message and Retry-After reach the client, and an unreachable
// upstream is a plain message that names no address.
func TestUpstreamErrorsOneReading(t *testing.T) {
	busy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"server busy, please try again"}`))
	})
	crashed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":"model runner crashed"}`))
	})
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}}
	tests := []struct {
		name       string
		upstream   http.Handler // nil: nothing listens
		path       string
		wantStatus int
		wantMsg    string
		wantRA     string
	}{
		{"tags, upstream busy", busy, "/api/tags", 503, "server busy, please try again", "7"},
		{"tags, upstream down", nil, "/api/tags", 502, "upstream unreachable", ""},
		{"readyz, upstream down", nil, "/readyz", 503, "upstream not ready: upstream unreachable", ""},
		{"readyz, upstream failing", crashed, "/readyz", 503, "upstream not ready: model runner crashed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newProxyFixture(t, tt.upstream, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
			resp, body := f.do(t, http.MethodGet, tt.path, nil, nil)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("GET %s = %d %s, want %d", tt.path, resp.StatusCode, body, tt.wantStatus)
			}
			if msg := ollamaError(t, resp, body); msg != tt.wantMsg || strings.Contains(string(body), "127.0.0.1") {
				t.Errorf("GET %s: error = %q (%s), want %q", tt.path, msg, body, tt.wantMsg)
			}
			if ra := resp.Header.Get("Retry-After"); ra != tt.wantRA {
				t.Errorf("GET %s: Retry-After = %q, want %q", tt.path, ra, tt.wantRA)
			}
		})
	}
}
