package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// TestGuardedBodiesOllamaReadsOtherwise: a body the guard's strict parser
// refuses (or reads another model from) but Ollama's encoding/json accepts
// is a 400 when the request would be guarded, and passes through when it
// would not.
func TestGuardedBodiesOllamaReadsOtherwise(t *testing.T) {
	tests := []struct {
		name, body string
		hdr        map[string]string
		status     int
		upstream   int // requests the upstream saw
	}{
		{"duplicate model names a virtual one", `{"model":"llama","model":"quiz","prompt":"p","stream":false}`, nil, 400, 0},
		{"duplicate member on a virtual model", `{"model":"quiz","prompt":"p","prompt":"q","stream":false}`, nil, 400, 0},
		{"invalid UTF-8 on a virtual model", "{\"model\":\"quiz\",\"prompt\":\"\xff\",\"stream\":false}", nil, 400, 0},
		{"Model in another case names a virtual one", `{"model":"llama","Model":"quiz","prompt":"p","stream":false}`, nil, 400, 0},
		{"duplicate member with a format schema", `{"model":"llama","prompt":"p","format":{"type":"object"},"stream":false,"stream":false}`, nil, 400, 0},
		{"duplicate member with X-Contract", `{"model":"llama","prompt":"p","prompt":"q","stream":false}`, map[string]string{"X-Contract": "json"}, 400, 0},
		{"duplicate member on a plain request passes", `{"model":"llama","prompt":"p","prompt":"q","stream":false}`, nil, 200, 1},
		{"Model in another case on a plain request passes", `{"model":"llama","MODEL":"llama","prompt":"p","stream":false}`, nil, 200, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{"Once upon a time"}}
			gw := newGuardedGateway(t, up, func(c *config.Config) {
				c.Routes = []config.Route{{Model: "quiz", Upstream: "llama", Contract: "json"}}
			})
			resp, body := post(t, gw.URL+"/api/generate", tt.body, tt.hdr)
			if resp.StatusCode != tt.status {
				t.Errorf("POST %s = %d %s, want %d", tt.body, resp.StatusCode, body, tt.status)
			}
			if tt.status == http.StatusBadRequest {
				ollamaError(t, resp, body)
			}
			if n := len(up.requests()); n != tt.upstream {
				t.Errorf("upstream saw %d requests, want %d", n, tt.upstream)
			}
		})
	}
}

// TestContractHeaderValues: every X-Contract value counts; empty ones are
// ignored, one contract named twice is that contract, two are a 400.
func TestContractHeaderValues(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		status  int
		guarded bool
	}{
		{"empty then json", []string{"", "json"}, 0, true},
		{"json then empty", []string{"json", " "}, 0, true},
		{"json twice", []string{"json", "json"}, 0, true},
		{"list with an empty item", []string{" , json"}, 0, true},
		{"two contracts", []string{"json", "mcq"}, 400, false},
		{"two contracts in one line", []string{"json, mcq"}, 400, false},
		{"only empty values", []string{"", ""}, 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &scriptedUpstream{answers: []string{"Once upon a time"}}
			gw := newGuardedGateway(t, up, func(c *config.Config) { c.MaxLLMCalls = -1 })
			resp, body := sendRequest(t, gw.URL, http.MethodPost, "/api/generate",
				strings.NewReader(`{"model":"m","prompt":"p","stream":false}`), http.Header{"X-Contract": tt.values})
			if got := resp.Header.Get("X-Contract-Status") != ""; got != tt.guarded {
				t.Errorf("X-Contract %q: guarded = %v (%d %s), want %v", tt.values, got, resp.StatusCode, body, tt.guarded)
			}
			if tt.status != 0 && resp.StatusCode != tt.status {
				t.Errorf("X-Contract %q = %d %s, want %d", tt.values, resp.StatusCode, body, tt.status)
			}
		})
	}
}
