package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// TestE2EPoolOfTwoOllamas: a gateway over two real Ollamas, one of which
// alone has a second model name, serves both as one Ollama: the union in
// /api/tags, requests for the second name on the one that has it; with
// one killed in the middle of a load of guarded and pass-through requests,
// no request fails but those already under way on it, its breaker opens
// and /readyz stays ready; restarted, a health check brings it back at
// once (long before the breaker's open_timeout) and it serves again.
func TestE2EPoolOfTwoOllamas(t *testing.T) {
	a, b := ollamatest.Start(t), ollamatest.Start(t)
	copyBody := strings.NewReader(`{"source":"` + a.Model + `","destination":"solo"}`)
	if resp, err := http.Post(b.URL+"/api/copy", "application/json", copyBody); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("copy on b: %v %v", resp, err)
	}
	cfg := e2eConfig(t, "")
	cfg.Upstream = ""
	cfg.Upstreams = []config.UpstreamServer{{URL: a.URL}, {URL: b.URL}}
	cfg.UpstreamHealthInterval = time.Hour // checked by hand below
	cfg.Breaker.FailureThreshold = 1
	cfg.Breaker.OpenTimeout = time.Hour
	cfg.Deadline = 60 * time.Second
	logs := &logBuffer{}
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		gw.Close()
		srv.Close()
		http.DefaultClient.CloseIdleConnections()
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	ctx := context.Background()
	srv.up.Check(ctx)

	resp, body := sendRequest(t, gw.URL, http.MethodGet, "/api/tags", nil, nil)
	if resp.StatusCode != 200 || strings.Count(string(body), `"name":"stories:latest"`) != 1 || !strings.Contains(string(body), `"name":"solo:latest"`) {
		t.Fatalf("/api/tags = %d %s, want stories once and solo", resp.StatusCode, body)
	}
	bin, err := ollamatest.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	list := exec.CommandContext(cctx, bin, "list")
	list.Env = append(os.Environ(), "OLLAMA_HOST="+gw.URL, "HOME="+t.TempDir())
	out, err := list.CombinedOutput()
	if err != nil || strings.Count(string(out), "stories:latest") != 1 || !strings.Contains(string(out), "solo:latest") || !strings.Contains(string(out), e2eStoryRoute+":latest") {
		t.Errorf("ollama list = %v\n%s\nwant stories once, solo and the virtual models", err, out)
	}
	gen := func(model string, guarded bool) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/generate",
			strings.NewReader(`{"model":"`+model+`","prompt":"Once upon a time","stream":false,"options":{"num_predict":8,"temperature":0}}`))
		if guarded {
			req.Header.Set("X-Contract", "json")
			req.Header.Set("Cache-Control", "no-cache")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	beforeA, beforeB := srv.up.Stats()[0].Requests, srv.up.Stats()[1].Requests
	for i := range 3 {
		if code, body := gen("solo", i == 1); code != 200 && code != 422 {
			t.Fatalf("generate solo = %d %s", code, body)
		}
	}
	if s := srv.up.Stats(); s[0].Requests != beforeA || s[1].Requests-beforeB < 3 {
		t.Errorf("model calls for solo, which only b has: a %d, b %d; want none on a, 3 or more on b", s[0].Requests-beforeA, s[1].Requests-beforeB)
	}

	// A load of guarded and pass-through requests; a dies in its middle.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	finished := make(chan struct{}, 24)
	send := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { finished <- struct{}{} }()
			code, body := gen(a.Model, i%2 == 0)
			// A guarded call cut while the guard read it was under way
			// on a: it is not replayed.
			if code != 200 && code != 422 && !strings.Contains(body, upstream.ErrIncomplete.Error()) {
				mu.Lock()
				failed = append(failed, body)
				mu.Unlock()
			}
		}()
	}
	for i := range 12 {
		send(i)
	}
	for range 4 {
		<-finished
	}
	a.Kill()
	for i := 12; i < 24; i++ {
		send(i)
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Errorf("%d requests failed with a dead: %q", len(failed), failed)
	}
	if s := srv.up.Stats()[0]; s.Breaker != "open" {
		t.Errorf("a's breaker = %s after it died, want open", s.Breaker)
	}
	if resp, body := sendRequest(t, gw.URL, http.MethodGet, "/readyz", nil, nil); resp.StatusCode != 200 {
		t.Errorf("/readyz with b up = %d %s", resp.StatusCode, body)
	}

	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	srv.up.Check(ctx)
	if s := srv.up.Stats()[0]; !s.Healthy || s.Breaker != "closed" {
		t.Fatalf("a after restart and a check = %+v, want healthy with its breaker closed", s)
	}
	b.Kill()
	srv.up.Check(ctx)
	if code, body := gen(a.Model, false); code != 200 {
		t.Errorf("generate with only a back = %d %s", code, body)
	}
	var stats StatsReport
	_, body = sendRequest(t, gw.URL, http.MethodGet, "/admin/stats", nil, nil)
	if err := json.Unmarshal(body, &stats); err != nil || len(stats.Upstreams) != 2 {
		t.Errorf("/admin/stats upstreams = %s", body)
	}
}
