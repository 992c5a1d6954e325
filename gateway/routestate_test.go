package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/models"
	"github.com/contractgateway/gateway/middleware/route"
)

// TestRouteStates: every read of the upstream's model list sets each
// route's state; a route whose upstream model is missing is a warning
// naming the route, the model and the fix, logged once per change, and a
// pull that brings the model makes the route ready again.
func TestRouteStates(t *testing.T) {
	up := &fakeModels{}
	vms := []route.VirtualModel{{Name: "story-json", Upstream: "stories", Contract: "story@1"}, {Name: "ghost", Upstream: "absent", Contract: "json@1"}}
	f := newProxyFixture(t, up, nil, Options{VirtualModels: func() []route.VirtualModel { return vms }})
	fix := "OLLAMA_HOST=http://127.0.0.1:11435 ollama pull absent"
	want := []models.RouteState{
		{Model: "story-json", Upstream: "stories", Contract: "story@1", State: models.RouteReady},
		{Model: "ghost", Upstream: "absent", Contract: "json@1", State: models.RouteModelMissing, Fix: fix},
	}
	for i := range 2 {
		if diff := cmp.Diff(want, f.srv.RouteStates(context.Background())); diff != "" {
			t.Errorf("RouteStates() #%d (-want +got):\n%s", i+1, diff)
		}
	}
	logs := f.logs.String()
	if n := strings.Count(logs, `"route's upstream model missing`); n != 1 {
		t.Errorf("%d warnings of the missing model, want 1 (one per change):\n%s", n, logs)
	}
	for _, w := range []string{`"level":"WARN"`, `"route":"ghost"`, `"upstream_model":"absent"`, `"fix":"` + fix + `"`} {
		if !strings.Contains(logs, w) {
			t.Errorf("log lacks %s:\n%s", w, logs)
		}
	}
	if !strings.Contains(logs, `"msg":"route ready","route":"story-json"`) {
		t.Errorf("log does not say story-json is ready:\n%s", logs)
	}
}

// TestStartWarnsOfMissingModels: serving a config whose route's upstream
// model the upstream lacks says so at start, and /admin/stats shows every
// route's state.
func TestStartWarnsOfMissingModels(t *testing.T) {
	up := &fakeModels{}
	ups := newHTTPTestServer(t, up)
	logs := &logBuffer{}
	cfg := config.Default()
	cfg.Upstream = ups
	cfg.Routes = []config.Route{{Model: "quiz", Upstream: "llama3.2", Contract: "json"}, {Model: "tale", Upstream: "stories", Contract: "json"}}
	srv, err := Build(cfg, newJSONLogger(logs))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-done
	}()
	logs.waitFor(t, `"route":"quiz","upstream_model":"llama3.2","contract":"json@1","fix":"OLLAMA_HOST=http://`+ln.Addr().String()+` ollama pull llama3.2"`)
	logs.waitFor(t, `"msg":"route ready","route":"tale"`)

	resp, err := http.Get("http://" + ln.Addr().String() + "/admin/stats")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var stats StatsReport
	if err := json.Unmarshal(body, &stats); err != nil {
		t.Fatalf("/admin/stats: %v: %s", err, body)
	}
	want := []models.RouteState{
		{Model: "quiz", Upstream: "llama3.2", Contract: "json@1", State: models.RouteModelMissing, Fix: "OLLAMA_HOST=http://" + ln.Addr().String() + " ollama pull llama3.2"},
		{Model: "tale", Upstream: "stories", Contract: "json@1", State: models.RouteReady},
	}
	if diff := cmp.Diff(want, stats.Routes); diff != "" {
		t.Errorf("/admin/stats routes (-want +got):\n%s", diff)
	}
	for _, p := range up.asked() {
		if p == "POST /api/pull" {
			t.Errorf("the upstream was asked to pull")
		}
	}
}

// newHTTPTestServer serves h on loopback until the test ends and returns
// its URL.
func newHTTPTestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// newJSONLogger logs everything to w as JSON lines.
func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
