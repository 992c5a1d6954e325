package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/internal/ollamatest"
)

// TestE2EOllamaKilledMidRequest: the real Ollama killed while it generates
// a guarded answer gives the client an Ollama-shaped 502 within the
// deadline, the upstream breaker counts it (it opens at one failure here),
// and once Ollama is back the next request is served.
func TestE2EOllamaKilledMidRequest(t *testing.T) {
	o := ollamatest.Start(t)
	target, _ := url.Parse(o.URL)
	arrived := make(chan struct{}, 16)
	front := httptest.NewServer(wholeBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/generate" {
			arrived <- struct{}{}
		}
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	})))
	defer front.Close()
	cfg := e2eConfig(t, front.URL)
	cfg.Deadline = 30 * time.Second
	cfg.Breaker.FailureThreshold = 1
	cfg.Breaker.OpenTimeout = 500 * time.Millisecond
	gw := startE2EGateway(t, cfg)

	// A long generation, guarded: the answer is one object at its end.
	body := `{"model":"` + o.Model + `","prompt":"Once upon a time","stream":true,"options":{"num_predict":100000,"temperature":0}}`
	type result struct {
		resp *http.Response
		body []byte
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, gw+"/api/generate", strings.NewReader(body))
		req.Header.Set("X-Contract", "json")
		req.Header.Set("Cache-Control", "no-cache")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- result{resp, b, time.Since(start)}
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the guarded request never reached Ollama")
	}
	o.Kill()
	r := <-done
	if r.resp == nil {
		t.Fatal("no answer after Ollama was killed")
	}
	var e struct {
		Error string `json:"error"`
	}
	if r.resp.StatusCode != http.StatusBadGateway || json.Unmarshal(r.body, &e) != nil || e.Error == "" {
		t.Fatalf("after the kill: %d %s, want 502 {\"error\": …}", r.resp.StatusCode, r.body)
	}
	if r.took > cfg.Deadline {
		t.Errorf("answered after %s, over the %s deadline", r.took, cfg.Deadline)
	}
	if resp, b := get(t, gw+"/metrics"); !strings.Contains(string(b), "gateway_upstream_breaker_state 2") {
		t.Errorf("breaker not open after the failure (%d):\n%s", resp.StatusCode, grepLines(b, "breaker"))
	}
	if resp, b := get(t, gw+"/readyz"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the breaker open = %d %s, want 503", resp.StatusCode, b)
	}

	if err := o.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	// Once the breaker lets a trial through, the next request is served.
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The story route sends its schema as format: the tiny model
		// writes a valid (nonsense) story.
		resp, b := post(t, gw+"/api/generate", `{"model":"`+e2eStoryRoute+`","prompt":"Once upon a time","stream":false,"options":{"temperature":0}}`,
			map[string]string{"Cache-Control": "no-cache"})
		if resp.StatusCode == http.StatusOK && resp.Header.Get("X-Contract-Status") != "" {
			if resp, b := get(t, gw+"/readyz"); resp.StatusCode != http.StatusOK {
				t.Errorf("/readyz once Ollama answers again = %d %s, want 200", resp.StatusCode, b)
			}
			if _, b := get(t, gw+"/metrics"); !strings.Contains(string(b), "gateway_upstream_breaker_state 0") {
				t.Errorf("breaker not closed after a success:\n%s", grepLines(b, "breaker_state"))
			}
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("after the restart: %d %s", resp.StatusCode, b)
		}
		// 503 while the breaker is open: wait the Retry-After it
		// announces, when the breaker lets the next request through as
		// its trial. The open timeout runs on the wall clock of a gateway
		// in front of a real Ollama, and nothing signals its end: the
		// breaker turns half-open only when a request comes.
		ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil || ra < 1 {
			t.Fatalf("503 with Retry-After %q, want a number of seconds", resp.Header.Get("Retry-After"))
		}
		time.Sleep(time.Duration(ra) * time.Second)
	}
}
