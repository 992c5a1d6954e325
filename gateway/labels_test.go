package gateway

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/stats"
)

// modelLabels returns the distinct model labels of
// gateway_guarded_requests_total on the gateway's /metrics.
func modelLabels(t *testing.T, base string) map[string]bool {
	t.Helper()
	resp, body := sendRequest(t, base, "GET", "/metrics", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^gateway_guarded_requests_total\{[^}]*model="([^"]*)"`).FindAllStringSubmatch(string(body), -1) {
		out[m[1]] = true
	}
	return out
}

// TestMetricModelSpellings sends ad-hoc schema requests for one model in
// many of the spellings Ollama answers alike: they make one series, under
// the model's canonical name, not one per spelling.
func TestMetricModelSpellings(t *testing.T) {
	gw := newAccessGateway(t, &keyUpstream{}, func(*config.Config) {}, nil)
	spellings := []string{"alpha", "AlPhA", "ALPHA:LATEST", "alpha:latest", "library/alpha", "Library/Alpha:Latest",
		"registry.ollama.ai/library/alpha", "registry.ollama.ai/library/alpha:latest", "REGISTRY.OLLAMA.AI/LIBRARY/ALPHA"}
	for _, m := range spellings {
		body := fmt.Sprintf(`{"model":%q,"prompt":"p","stream":false,"format":{"type":"object"}}`, m)
		resp, b := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(body), nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "valid" {
			t.Fatalf("generate %q = %d %s %s, want a valid guarded answer", m, resp.StatusCode, resp.Header.Get("X-Contract-Status"), b)
		}
	}
	if got := modelLabels(t, gw.URL); len(got) != 1 || !got["alpha"] {
		t.Errorf("model labels after %d spellings of alpha = %v, want alpha alone", len(spellings), got)
	}
}

// TestMetricModelBound asks more distinct models than stats.MaxModels:
// the first MaxModels keep their names, the rest share "other".
func TestMetricModelBound(t *testing.T) {
	gw := newAccessGateway(t, &keyUpstream{}, func(*config.Config) {}, nil)
	for i := range stats.MaxModels + 5 {
		body := fmt.Sprintf(`{"model":"m%03d","prompt":"p","stream":false,"format":{"type":"object"}}`, i)
		resp, err := http.Post(gw.URL+"/api/generate", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("generate m%03d = %d", i, resp.StatusCode)
		}
	}
	got := modelLabels(t, gw.URL)
	if len(got) != stats.MaxModels+1 || !got[stats.OtherModel] || !got["m000"] || got[fmt.Sprintf("m%03d", stats.MaxModels)] {
		t.Errorf("%d model labels after %d models, want the first %d and %q", len(got), stats.MaxModels+5, stats.MaxModels, stats.OtherModel)
	}
}
