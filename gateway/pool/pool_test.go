package pool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/upstream"
)

func TestChoose(t *testing.T) {
	up := func(has, loaded bool, inflight int64, weight int) candidate {
		return candidate{Known: true, Healthy: true, Has: has, Loaded: loaded, InFlight: inflight, Weight: weight}
	}
	down := candidate{Known: true, Healthy: false, Has: true, Weight: 1}
	open := candidate{Known: true, Healthy: true, Open: true, Has: true, Weight: 1}
	unknown := candidate{Healthy: true, Weight: 1}
	tests := []struct {
		name  string
		cs    []candidate
		model string
		turn  uint64
		want  []int
		v     verdict
	}{
		{"only the member that has the model", []candidate{up(false, false, 0, 1), up(true, false, 0, 1)}, "m", 0, []int{1}, chosen},
		{"loaded first", []candidate{up(true, false, 0, 1), up(true, true, busyAfter-1, 1)}, "m", 0, []int{1, 0}, chosen},
		{"loaded but busy: the idle one loads it", []candidate{up(true, true, busyAfter, 1), up(true, false, 0, 1)}, "m", 0, []int{1, 0}, chosen},
		{"loaded and busy, but less so", []candidate{up(true, true, busyAfter, 1), up(true, false, busyAfter+1, 1)}, "m", 0, []int{0, 1}, chosen},
		{"fewest in flight", []candidate{up(true, false, 3, 1), up(true, false, 1, 1)}, "m", 0, []int{1, 0}, chosen},
		{"then the heavier", []candidate{up(true, false, 0, 1), up(true, false, 0, 3)}, "m", 0, []int{1, 0}, chosen},
		{"ties take turns: turn 0", []candidate{up(true, false, 0, 1), up(true, false, 0, 1)}, "m", 0, []int{0, 1}, chosen},
		{"ties take turns: turn 1", []candidate{up(true, false, 0, 1), up(true, false, 0, 1)}, "m", 1, []int{1, 0}, chosen},
		{"unhealthy left out", []candidate{down, up(true, false, 9, 1)}, "m", 0, []int{1}, chosen},
		{"open breaker left out", []candidate{open, up(true, false, 9, 1)}, "m", 0, []int{1}, chosen},
		{"no member has it: not found", []candidate{up(false, false, 0, 1), up(false, false, 0, 1)}, "m", 0, nil, notFound},
		{"every member that has it down", []candidate{down, open, up(false, false, 0, 1)}, "m", 0, nil, allDown},
		{"unknown lists may have it", []candidate{unknown, up(false, false, 0, 1)}, "m", 0, []int{0}, chosen},
		{"no model: every healthy member", []candidate{up(false, false, 1, 1), down, up(false, false, 0, 1)}, "", 0, []int{2, 0}, chosen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, v := choose(tt.cs, tt.model, tt.turn)
			if v != tt.v || !cmp.Equal(got, tt.want) {
				t.Errorf("choose(%s) = %v, %v; want %v, %v", tt.name, got, v, tt.want, tt.v)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"0.17.4", "0.17.4", 0}, {"0.6.10", "0.17.0", -1}, {"1.0.0", "0.99.9", 1},
		{"0.17.4-rc1", "0.17.4", -1}, {"v0.5", "0.5.0", 0},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// fakeOllama is an httptest Ollama with a model list, a list of loaded
// models and a generate that answers its own name.
type fakeOllama struct {
	name    string
	srv     *httptest.Server
	models  []string
	loaded  []string
	version string
	// fail makes every request but the health checks' answer 500.
	fail atomic.Bool
	// down makes every request, checks included, answer 500.
	down atomic.Bool
	// pullFails makes /api/pull answer an error line.
	pullFails bool
	// hold, when set, holds generate after its first line until closed.
	hold     chan struct{}
	started  chan struct{}
	requests atomic.Int64
	mu       sync.Mutex
	pulled   []string
	deleted  []string
}

func newFakeOllama(t *testing.T, name string, models, loaded []string) *fakeOllama {
	t.Helper()
	f := &fakeOllama{name: name, models: models, loaded: loaded, version: "0.17.4"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOllama) url() *url.URL { u, _ := url.Parse(f.srv.URL); return u }

func (f *fakeOllama) list(names []string) []byte {
	type entry struct {
		Name  string `json:"name"`
		Model string `json:"model"`
		Owner string `json:"owner"`
	}
	out := struct {
		Models []entry `json:"models"`
	}{Models: []entry{}}
	for _, n := range names {
		out.Models = append(out.Models, entry{n, n, f.name})
	}
	b, _ := json.Marshal(out)
	return b
}

func (f *fakeOllama) serve(w http.ResponseWriter, r *http.Request) {
	if f.down.Load() {
		http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
		return
	}
	switch r.URL.Path {
	case "/api/version":
		fmt.Fprintf(w, `{"version":%q}`, f.version)
		return
	case "/api/tags":
		w.Write(f.list(f.models))
		return
	case "/api/ps":
		w.Write(f.list(f.loaded))
		return
	}
	f.requests.Add(1)
	if f.fail.Load() {
		http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		return
	}
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/api/pull":
		f.mu.Lock()
		f.pulled = append(f.pulled, string(body))
		f.mu.Unlock()
		if f.pullFails {
			fmt.Fprint(w, `{"status":"pulling manifest"}`+"\n"+`{"error":"no space left"}`+"\n")
			return
		}
		fmt.Fprint(w, `{"status":"pulling manifest"}`+"\n"+`{"status":"success"}`+"\n")
	case "/api/delete":
		var req struct{ Model string }
		json.Unmarshal(body, &req)
		for _, m := range f.models {
			if upstream.ModelKey(m) == upstream.ModelKey(req.Model) {
				f.mu.Lock()
				f.deleted = append(f.deleted, req.Model)
				f.mu.Unlock()
				return
			}
		}
		http.Error(w, fmt.Sprintf(`{"error":"model '%s' not found"}`, req.Model), http.StatusNotFound)
	default:
		fmt.Fprintf(w, `{"response":%q,"done":false}`+"\n", f.name)
		if f.hold != nil {
			w.(http.Flusher).Flush()
			close(f.started)
			<-f.hold
			return // cut before done
		}
		fmt.Fprint(w, `{"response":"","done":true}`+"\n")
	}
}

func newTestPool(t *testing.T, fakes ...*fakeOllama) *Pool {
	t.Helper()
	var ms []Member
	for _, f := range fakes {
		ms = append(ms, Member{URL: f.url()})
	}
	p := New(Options{Members: ms, HealthInterval: -1, Breaker: upstream.BreakerSettings{FailureThreshold: 1}, RequestModel: access.RequestModel})
	t.Cleanup(p.Close)
	return p
}

// generate asks the pool for model and returns who answered.
func generate(t *testing.T, p *Pool, model string, viaBody bool) (string, error) {
	t.Helper()
	return generateFrom(t, p, "", model, viaBody)
}

// generateFrom is generate, sent by caller ([WithCaller]).
func generateFrom(t *testing.T, p *Pool, caller, model string, viaBody bool) (string, error) {
	t.Helper()
	ctx := upstream.WithCaller(context.Background(), caller)
	if !viaBody {
		ctx = upstream.WithModel(ctx, model)
	}
	ctx = upstream.Track(ctx)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/api/generate", strings.NewReader(fmt.Sprintf(`{"model":%q}`, model)))
	reply, err := upstream.Send(p, req, 0)
	if err != nil {
		return "", err
	}
	var first struct{ Response string }
	json.NewDecoder(bytes.NewReader(reply.Body)).Decode(&first)
	if served := upstream.Served(ctx); served == "" {
		t.Errorf("Served = %q after an answer", served)
	}
	return first.Response, nil
}

func TestPoolRoutesByModel(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"small:latest"}, nil)
	b := newFakeOllama(t, "b", []string{"small:latest", "big:latest"}, []string{"big:latest"})
	p := newTestPool(t, a, b)
	p.Check(context.Background())
	tests := []struct {
		name    string
		model   string
		viaBody bool
		want    []string // acceptable answerers
		code    int
	}{
		{"only b has big", "big", false, []string{"b"}, 0},
		{"read from the body", "big:latest", true, []string{"b"}, 0},
		{"either has small", "small", false, []string{"a", "b"}, 0},
		{"nobody has it: 404", "huge", false, nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := generate(t, p, tt.model, tt.viaBody)
			if tt.code != 0 {
				if he := apierr.From(err); he.Status() != tt.code || !strings.Contains(he.Message(), `model "huge" not found`) {
					t.Fatalf("generate(%s) = %v, want %d model not found", tt.model, err, tt.code)
				}
				return
			}
			if err != nil || !strings.Contains(strings.Join(tt.want, ","), got) {
				t.Fatalf("generate(%s) answered by %q, %v; want one of %v", tt.model, got, err, tt.want)
			}
		})
	}
}

func TestPoolPrefersLoadedThenSpreads(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"m"}, nil)
	b := newFakeOllama(t, "b", []string{"m"}, []string{"m"})
	p := newTestPool(t, a, b)
	p.Check(context.Background())
	for range 3 {
		if got, err := generate(t, p, "m", false); err != nil || got != "b" {
			t.Fatalf("generate = %q, %v; want b, where m is loaded", got, err)
		}
	}
	// b unloads m: requests held open on a spread across both.
	b.loaded = nil
	p.Check(context.Background())
	var bodies []io.Closer
	for range 4 {
		req, _ := http.NewRequestWithContext(upstream.WithModel(context.Background(), "m"), http.MethodPost, "/api/generate", strings.NewReader(`{"model":"m"}`))
		resp, err := p.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
	}
	stats := p.Stats()
	if stats[0].InFlight != 2 || stats[1].InFlight != 2 {
		t.Errorf("in flight = %d, %d; want 2, 2 (fewest in flight first)", stats[0].InFlight, stats[1].InFlight)
	}
	for _, b := range bodies {
		b.Close()
	}
	if s := p.Stats(); s[0].InFlight != 0 || s[1].InFlight != 0 {
		t.Errorf("in flight after close = %d, %d; want 0, 0", s[0].InFlight, s[1].InFlight)
	}
}

func TestPoolFailsOverBeforeTheFirstByte(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(a *fakeOllama)
	}{
		{"500", func(a *fakeOllama) { a.fail.Store(true) }},
		{"closed listener", func(a *fakeOllama) { a.srv.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFakeOllama(t, "a", []string{"m"}, []string{"m"})
			b := newFakeOllama(t, "b", []string{"m"}, nil)
			p := newTestPool(t, a, b)
			p.Check(context.Background())
			tt.break_(a)
			// Two callers: a 5xx to one alone does not count.
			for i, viaBody := range []bool{false, true} {
				if got, err := generateFrom(t, p, fmt.Sprint("key ", i), "m", viaBody); err != nil || got != "b" {
					t.Fatalf("generate = %q, %v; want b after a failed", got, err)
				}
			}
			if s := p.Stats()[0]; s.Errors == 0 || s.Breaker != "open" {
				t.Errorf("a's stats = %+v; want errors counted and its breaker open", s)
			}
		})
	}
}

func TestPoolNeverReplaysAStartedStream(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"m"}, []string{"m"})
	b := newFakeOllama(t, "b", []string{"m"}, nil)
	a.hold, a.started = make(chan struct{}), make(chan struct{})
	p := newTestPool(t, a, b)
	p.Check(context.Background())
	req, _ := http.NewRequestWithContext(upstream.WithModel(context.Background(), "m"), http.MethodPost, "/api/generate", strings.NewReader(`{"model":"m"}`))
	resp, err := p.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	<-a.started
	a.srv.CloseClientConnections()
	close(a.hold)
	_, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if rerr == nil {
		t.Errorf("a stream cut after its first line read to its end without error")
	}
	if n := b.requests.Load(); n != 0 {
		t.Errorf("b got %d requests; a started stream must not be replayed", n)
	}
}

func TestPoolHealthCheckBringsAMemberBack(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"m"}, []string{"m"})
	b := newFakeOllama(t, "b", []string{"m"}, nil)
	p := newTestPool(t, a, b)
	p.Check(context.Background())
	a.down.Store(true)
	// Two callers: a 5xx to one alone does not count.
	for _, caller := range []string{"key x", "key y"} {
		if got, err := generateFrom(t, p, caller, "m", false); err != nil || got != "b" {
			t.Fatalf("generate = %q, %v; want b while a is down", got, err)
		}
	}
	p.Check(context.Background())
	if s := p.Stats()[0]; s.Healthy || s.Breaker != "open" {
		t.Fatalf("a = %+v; want unhealthy with its breaker open", s)
	}
	a.down.Store(false)
	p.Check(context.Background())
	if s := p.Stats()[0]; !s.Healthy || s.Breaker != "closed" {
		t.Fatalf("a after a passing check = %+v; want healthy, breaker closed", s)
	}
	if got, err := generate(t, p, "m", false); err != nil || got != "a" {
		t.Fatalf("generate = %q, %v; want a again, where m is loaded", got, err)
	}
}

func TestPoolModelDownIs503(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"big"}, nil)
	b := newFakeOllama(t, "b", []string{"small"}, nil)
	p := newTestPool(t, a, b)
	p.Check(context.Background())
	a.down.Store(true)
	p.Check(context.Background())
	_, err := generate(t, p, "big", false)
	if he := apierr.From(err); he.Status() != http.StatusServiceUnavailable || !strings.Contains(he.Message(), "down") {
		t.Errorf("generate(big) with its only upstream down = %v, want 503 saying it is down", err)
	}
	if !p.Ready() {
		t.Errorf("Ready() = false with b up")
	}
	if p.State() != gobreaker.StateClosed {
		t.Errorf("State() = %v with b's breaker closed", p.State())
	}
}

func TestPoolUnions(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"small:latest", "shared:latest"}, []string{"small:latest"})
	b := newFakeOllama(t, "b", []string{"shared", "big:latest"}, []string{"big:latest"})
	b.version = "0.6.2"
	p := newTestPool(t, a, b)
	tests := []struct {
		path string
		want string
	}{
		{"/api/tags", `{"models":[{"name":"small:latest","model":"small:latest","owner":"a"},{"name":"shared:latest","model":"shared:latest","owner":"a"},{"name":"big:latest","model":"big:latest","owner":"b"}]}`},
		{"/api/ps", `{"models":[{"name":"small:latest","model":"small:latest","owner":"a"},{"name":"big:latest","model":"big:latest","owner":"b"}]}`},
		{"/api/version", `{"version":"0.6.2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			reply, err := p.Get(context.Background(), tt.path, nil)
			if err != nil || string(reply.Body) != tt.want {
				t.Errorf("Get(%s) = %s, %v\nwant %s", tt.path, reply.Body, err, tt.want)
			}
		})
	}
}

func TestPoolFansOutModelManagement(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		method    string
		body      string
		pullFails bool
		code      int
		want      string // in the body or the error
	}{
		{"pull on both", "/api/pull", http.MethodPost, `{"model":"m","stream":false}`, false, 200, `"success"`},
		{"pull failing on b", "/api/pull", http.MethodPost, `{"model":"m","stream":false}`, true, 502, "pull failed on 1 of 2 upstreams"},
		{"streamed pull failing on b", "/api/pull", http.MethodPost, `{"model":"m"}`, true, 200, `{"error":"pull failed on 1 of 2 upstreams`},
		{"streamed pull", "/api/pull", http.MethodPost, `{"model":"m"}`, false, 200, `{"status":"success"}`},
		{"delete where it is", "/api/delete", http.MethodDelete, `{"model":"only-a"}`, false, 200, ""},
		{"delete of a model none has", "/api/delete", http.MethodDelete, `{"model":"none"}`, false, 404, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFakeOllama(t, "a", []string{"only-a"}, nil)
			b := newFakeOllama(t, "b", nil, nil)
			b.pullFails = tt.pullFails
			p := newTestPool(t, a, b)
			req, _ := http.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			resp, err := p.RoundTrip(req)
			if err != nil {
				if he := apierr.From(err); he.Status() != tt.code || !strings.Contains(he.Message(), tt.want) {
					t.Fatalf("%s = %v, want %d with %q", tt.name, err, tt.code, tt.want)
				}
			} else {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.want) {
					t.Fatalf("%s = %d %s, want %d with %q", tt.name, resp.StatusCode, body, tt.code, tt.want)
				}
			}
			if tt.path == "/api/pull" && (len(a.pulled) != 1 || len(b.pulled) != 1) {
				t.Errorf("pulls reached a %d and b %d times, want once each", len(a.pulled), len(b.pulled))
			}
		})
	}
}

func TestPoolOfOneIsItsClient(t *testing.T) {
	a := newFakeOllama(t, "a", []string{"m"}, nil)
	p := New(Options{Members: []Member{{URL: a.url()}}})
	defer p.Close()
	// No model check: a model it does not list still goes to it.
	if got, err := generate(t, p, "unlisted", true); err != nil || got != "a" {
		t.Fatalf("generate = %q, %v; want a's answer", got, err)
	}
	reply, err := p.Get(context.Background(), "/api/tags", nil)
	if err != nil || !bytes.Equal(reply.Body, a.list(a.models)) {
		t.Errorf("Get(/api/tags) = %s, %v; want a's own bytes", reply.Body, err)
	}
	if s := p.Stats()[0]; !s.CheckedAt.IsZero() {
		t.Errorf("a pool of one was health-checked at %v", s.CheckedAt)
	}
}

func FuzzUnion(f *testing.F) {
	f.Add([]byte(`{"models":[{"name":"a"}]}`), []byte(`{"models":[{"name":"a:latest"},{"name":"b"}]}`))
	f.Add([]byte(`{"models":null}`), []byte(`{}`))
	f.Add([]byte(`null`), []byte(`null`))
	f.Add([]byte(`{"data":[{"id":"x"}]}`), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		out, err := union([][]byte{a, b}, "models", "name")
		if err != nil {
			return
		}
		var v map[string]json.RawMessage
		if json.Unmarshal(out, &v) != nil {
			t.Fatalf("union(%q, %q) = %q, not a JSON object", a, b, out)
		}
	})
}

func FuzzCompareVersions(f *testing.F) {
	f.Add("0.17.4", "0.6.10-rc1")
	f.Add("v1", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		if x, y := compareVersions(a, b), compareVersions(b, a); x != -y {
			t.Fatalf("compareVersions(%q, %q) = %d but the reverse is %d", a, b, x, y)
		}
	})
}
