package middleware

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// funcUpstream is an Upstream in the test's own process: no sockets, so
// that it runs inside a synctest bubble.
type funcUpstream func(req *http.Request) (*http.Response, error)

func (f funcUpstream) Do(req *http.Request) (*http.Response, error) { return f(req) }

func answerResponse(text string) *http.Response {
	b, _ := json.Marshal(map[string]any{"model": "m", "response": text, "done": true, "done_reason": "stop"})
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b))), ContentLength: int64(len(b))}
}

// cachedApp is an echo app with the guard and a memory cache in front of
// a handler that must never be reached (every request here is guarded).
func cachedApp(t *testing.T, up Upstream) *echo.Echo {
	t.Helper()
	return cachedAppWith(t, builtinRoutes(t), cache.NewMemory(cache.MemoryConfig{}), up)
}

// cachedAppWith is cachedApp with the given routes and store.
func cachedAppWith(t *testing.T, routes *route.Routes, store CacheStore, up Upstream) *echo.Echo {
	t.Helper()
	cfg := DefaultGuardConfig
	cfg.Resolver, cfg.Upstream = routes, up
	cfg.Cache = NewCache(store)
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler
	e.Use(mw)
	e.Any("/*", func(c echo.Context) error {
		t.Errorf("request passed through: %s", c.Request().URL)
		return nil
	})
	return e
}

func guardedRequest(ctx context.Context, stream bool, header map[string]string) *http.Request {
	body := `{"model":"m","prompt":"p","stream":false}`
	if stream {
		body = `{"model":"m","prompt":"p"}`
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/generate", strings.NewReader(body))
	req.Header.Set("X-Contract", "json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// TestCacheStoresOnlyValid: a valid answer is stored and served again —
// streamed or not, with the same text — while a failure is asked again.
func TestCacheStoresOnlyValid(t *testing.T) {
	var calls atomic.Int32
	text := `{"a":1}`
	e := cachedApp(t, funcUpstream(func(req *http.Request) (*http.Response, error) {
		calls.Add(1)
		return answerResponse(text), nil
	}))
	serve := func(stream bool, h map[string]string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, guardedRequest(context.Background(), stream, h))
		return rec
	}
	first := serve(false, nil)
	if first.Code != 200 || first.Header().Get("X-Cache") != "miss" {
		t.Fatalf("first: %d X-Cache %q", first.Code, first.Header().Get("X-Cache"))
	}
	hit := serve(false, nil)
	streamHit := serve(true, nil)
	if calls.Load() != 1 {
		t.Fatalf("%d upstream calls for three identical requests, want 1", calls.Load())
	}
	var a, b map[string]any
	json.Unmarshal(first.Body.Bytes(), &a)
	json.Unmarshal(hit.Body.Bytes(), &b)
	if hit.Header().Get("X-Cache") != "hit" || hit.Header().Get("X-Contract-Status") != "valid" || a["response"] != b["response"] {
		t.Errorf("hit: X-Cache %q, status %q, response %v; want hit, valid, %v", hit.Header().Get("X-Cache"),
			hit.Header().Get("X-Contract-Status"), b["response"], a["response"])
	}
	if sum, _ := b["contract"].(map[string]any); sum["cache"] != "hit" {
		t.Errorf("hit summary %v, want cache hit", b["contract"])
	}
	lines := strings.Split(strings.TrimSpace(streamHit.Body.String()), "\n")
	var chunk map[string]any
	json.Unmarshal([]byte(lines[0]), &chunk)
	if streamHit.Header().Get("X-Cache") != "hit" || len(lines) != 2 || chunk["response"] != a["response"] {
		t.Errorf("streamed hit: X-Cache %q, %d chunks, first %v; want hit, 2 chunks, %v", streamHit.Header().Get("X-Cache"), len(lines), chunk["response"], a["response"])
	}

	// no-cache skips the read, no-store the write.
	if r := serve(false, map[string]string{"Cache-Control": "no-cache"}); r.Header().Get("X-Cache") != "bypass" || calls.Load() != 2 {
		t.Errorf("no-cache: X-Cache %q, %d calls; want bypass and a call", r.Header().Get("X-Cache"), calls.Load())
	}
	text = "no JSON here"
	var spent [2]int32
	for i := range 2 {
		before := calls.Load()
		if r := serve(false, map[string]string{"X-Contract": "mcq"}); r.Code != http.StatusUnprocessableEntity || r.Header().Get("X-Cache") != "miss" {
			t.Fatalf("mcq on prose: %d X-Cache %q, want 422 miss", r.Code, r.Header().Get("X-Cache"))
		}
		spent[i] = calls.Load() - before
	}
	if spent[0] == 0 || spent[1] != spent[0] {
		t.Errorf("upstream calls of two failing requests: %v, want the same again: a failure is never stored", spent)
	}
	text = `{"b":2}`
	serve(false, map[string]string{"X-Contract": "json", "Cache-Control": "no-store", "X-Contract-Params": ""})
	if r := serve(false, map[string]string{"Cache-Control": "no-store"}); r.Header().Get("X-Cache") != "hit" {
		t.Errorf("no-store still reads: X-Cache %q, want hit", r.Header().Get("X-Cache"))
	}
}

// TestCacheCoalesces: eight identical requests in flight make one upstream
// call and share its answer.
func TestCacheCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		release := make(chan struct{})
		e := cachedApp(t, funcUpstream(func(req *http.Request) (*http.Response, error) {
			calls.Add(1)
			<-release
			return answerResponse(`{"a":1}`), nil
		}))
		const n = 8
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			recs[i] = httptest.NewRecorder()
			wg.Go(func() { e.ServeHTTP(recs[i], guardedRequest(context.Background(), i%2 == 0, nil)) })
		}
		synctest.Wait()
		if calls.Load() != 1 {
			t.Fatalf("%d upstream calls in flight, want 1", calls.Load())
		}
		close(release)
		wg.Wait()
		for i, r := range recs {
			if r.Code != 200 || r.Header().Get("X-Contract-Status") != "valid" {
				t.Errorf("request %d: %d %q", i, r.Code, r.Header().Get("X-Contract-Status"))
			}
		}
	})
}

// TestCacheWaiterLeaves: a waiter whose client leaves does not cancel the
// others' upstream call; when the last one leaves, the call is cancelled.
func TestCacheWaiterLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		upCtx := make(chan context.Context, 1)
		e := cachedApp(t, funcUpstream(func(req *http.Request) (*http.Response, error) {
			upCtx <- req.Context()
			select {
			case <-release:
				return answerResponse(`{"a":1}`), nil
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}))
		ctxA, cancelA := context.WithCancel(context.Background())
		ctxB, cancelB := context.WithCancel(context.Background())
		ctxC, cancelC := context.WithCancel(context.Background())
		defer cancelC()
		var wg sync.WaitGroup
		recB := httptest.NewRecorder()
		wg.Go(func() { e.ServeHTTP(httptest.NewRecorder(), guardedRequest(ctxA, false, nil)) })
		synctest.Wait()
		wg.Go(func() { e.ServeHTTP(recB, guardedRequest(ctxB, false, nil)) })
		synctest.Wait()
		up := <-upCtx
		cancelA()
		synctest.Wait()
		if up.Err() != nil {
			t.Fatal("the upstream call was cancelled while a waiter remained")
		}
		close(release)
		wg.Wait()
		if recB.Code != 200 {
			t.Errorf("the remaining waiter got %d, want 200", recB.Code)
		}
		cancelB()

		// A new run, and everyone leaves: the upstream call is cancelled.
		reqC := guardedRequest(ctxC, false, map[string]string{"X-Contract-Params": ""})
		reqC.Body = io.NopCloser(strings.NewReader(`{"model":"m","prompt":"other","stream":false}`))
		wg.Go(func() { e.ServeHTTP(httptest.NewRecorder(), reqC) })
		synctest.Wait()
		up = <-upCtx
		cancelC()
		wg.Wait()
		synctest.Wait()
		if up.Err() == nil {
			t.Error("the upstream call goes on after every client left")
		}
	})
}

// renderingRoutes are three virtual models over one upstream model and
// one contract that differ only in how the answer is rendered: quiz bare,
// quizfenced fenced, quizreport bare with the corrections reported.
func renderingRoutes(t *testing.T) *route.Routes {
	t.Helper()
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := route.NewRoutes(reg, []route.Spec{
		{Model: "quiz", Upstream: "m", Contract: "json"},
		{Model: "quizfenced", Upstream: "m", Contract: "json", Output: "fenced"},
		{Model: "quizreport", Upstream: "m", Contract: "json", Report: route.ReportCorrections},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

// ask is one request of the rendering tests: a virtual model, and
// whether the client asks for the corrections report.
type ask struct {
	model  string
	report bool
}

// answerOf is the parts of a guarded /api/generate answer the cache tests
// look at.
type answerOf struct {
	cache       string
	response    string
	corrections json.RawMessage // nil when the summary has none
}

func (a ask) serve(t *testing.T, e *echo.Echo) answerOf {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/generate",
		strings.NewReader(`{"model":"`+a.model+`","prompt":"p","stream":false}`))
	if a.report {
		req.Header.Set("X-Contract-Report", route.ReportCorrections)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%+v: %d %s", a, rec.Code, rec.Body)
	}
	var body struct {
		Response string                     `json:"response"`
		Contract map[string]json.RawMessage `json:"contract"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%+v: %v in %s", a, err, rec.Body)
	}
	return answerOf{cache: rec.Header().Get("X-Cache"), response: body.Response, corrections: body.Contract["corrections"]}
}

// repairedText is an answer local repair fixes (a trailing comma), so that
// its corrections list is not empty.
const repairedText = `{"a":1,}`

// TestCacheKeysOnRendering: two routes over the same model and contract
// that render or report the answer differently do not share cache
// entries: the second is a miss and gets its own shape. route.Routes that render
// alike still share.
func TestCacheKeysOnRendering(t *testing.T) {
	tests := []struct {
		name            string
		first, second   ask
		wantCache       string
		wantFenced      bool
		wantCorrections bool
	}{
		{"same route", ask{"quiz", false}, ask{"quiz", false}, cacheHit, false, false},
		{"bare then fenced", ask{"quiz", false}, ask{"quizfenced", false}, cacheMiss, true, false},
		{"fenced then bare", ask{"quizfenced", false}, ask{"quiz", false}, cacheMiss, false, false},
		{"report asked by the client", ask{"quiz", false}, ask{"quiz", true}, cacheMiss, false, true},
		{"report set by the route", ask{"quiz", false}, ask{"quizreport", false}, cacheMiss, false, true},
		{"report dropped", ask{"quizreport", false}, ask{"quiz", false}, cacheMiss, false, false},
		{"report by route and by client alike", ask{"quizreport", false}, ask{"quiz", true}, cacheHit, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			e := cachedAppWith(t, renderingRoutes(t), cache.NewMemory(cache.MemoryConfig{}),
				funcUpstream(func(*http.Request) (*http.Response, error) {
					calls.Add(1)
					return answerResponse(repairedText), nil
				}))
			tt.first.serve(t, e)
			got := tt.second.serve(t, e)
			if got.cache != tt.wantCache {
				t.Errorf("second request: X-Cache %q, want %q", got.cache, tt.wantCache)
			}
			if fenced := strings.HasPrefix(got.response, "```json\n"); fenced != tt.wantFenced {
				t.Errorf("second request: response %q, fenced %v, want %v", got.response, fenced, tt.wantFenced)
			}
			if has := len(got.corrections) > 0 && string(got.corrections) != "[]"; has != tt.wantCorrections {
				t.Errorf("second request: corrections %s, want some: %v", got.corrections, tt.wantCorrections)
			}
			wantCalls := int32(2)
			if tt.wantCache == cacheHit {
				wantCalls = 1
			}
			if calls.Load() != wantCalls {
				t.Errorf("%d upstream calls, want %d", calls.Load(), wantCalls)
			}
		})
	}
}

// TestCacheHitKeepsCorrections: a repeated request that reports the
// corrections of a repaired answer gets the same corrections from the
// cache as the miss that made them.
func TestCacheHitKeepsCorrections(t *testing.T) {
	tests := []struct {
		name string
		ask  ask
	}{
		{"asked by the client", ask{"quiz", true}},
		{"set by the route", ask{"quizreport", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := cachedAppWith(t, renderingRoutes(t), cache.NewMemory(cache.MemoryConfig{}),
				funcUpstream(func(*http.Request) (*http.Response, error) { return answerResponse(repairedText), nil }))
			miss, hit := tt.ask.serve(t, e), tt.ask.serve(t, e)
			if miss.cache != cacheMiss || hit.cache != cacheHit {
				t.Fatalf("X-Cache %q then %q, want miss then hit", miss.cache, hit.cache)
			}
			var want, got []map[string]any
			if err := json.Unmarshal(miss.corrections, &want); err != nil || len(want) == 0 {
				t.Fatalf("the miss reports corrections %s (%v), want a repaired answer's", miss.corrections, err)
			}
			if err := json.Unmarshal(hit.corrections, &got); err != nil {
				t.Fatalf("the hit's corrections %s: %v", hit.corrections, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("corrections of the hit (-miss +hit):\n%s", diff)
			}
		})
	}
}

// keysStore is a memory store that remembers the keys written to it.
type keysStore struct {
	*cache.Memory
	mu   sync.Mutex
	keys []cache.Key
}

func (s *keysStore) Set(ctx context.Context, k cache.Key, v []byte) error {
	s.mu.Lock()
	s.keys = append(s.keys, k)
	s.mu.Unlock()
	return s.Memory.Set(ctx, k, v)
}

// TestCacheEntryWithoutCorrections: an entry written before entries kept
// the corrections still answers a request that does not report them, and
// is a miss for one that does (it cannot give the list).
func TestCacheEntryWithoutCorrections(t *testing.T) {
	oldEntry := `{"status":"repaired","contract":"json@1","repairs":1,"text":"{\"a\":1}",` +
		`"obj":{"model":"m","response":"{\"a\":1}","done":true,"contract":{"id":"json@1","status":"repaired"}}}`
	tests := []struct {
		name      string
		ask       ask
		wantCache string
	}{
		{"not reporting", ask{"quiz", false}, cacheHit},
		{"reporting", ask{"quiz", true}, cacheMiss},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &keysStore{Memory: cache.NewMemory(cache.MemoryConfig{})}
			var calls atomic.Int32
			e := cachedAppWith(t, renderingRoutes(t), store, funcUpstream(func(*http.Request) (*http.Response, error) {
				calls.Add(1)
				return answerResponse(repairedText), nil
			}))
			tt.ask.serve(t, e)
			if len(store.keys) != 1 {
				t.Fatalf("%d entries written, want 1", len(store.keys))
			}
			if err := store.Memory.Set(context.Background(), store.keys[0], []byte(oldEntry)); err != nil {
				t.Fatal(err)
			}
			if got := tt.ask.serve(t, e); got.cache != tt.wantCache {
				t.Errorf("X-Cache %q over an entry without corrections, want %q", got.cache, tt.wantCache)
			}
		})
	}
}

// TestCacheEntryRoundTrip: what the cache stores (in memory or shared in
// Redis) decodes to the same answer and corrections.
func TestCacheEntryRoundTrip(t *testing.T) {
	obj := func(s string) *strictjson.Value {
		v, err := strictjson.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		res  *result
	}{
		{"without corrections", &result{status: "valid", contract: "json@1", text: `{"a":1}`, obj: obj(`{"response":"{\"a\":1}"}`)}},
		{"with corrections", &result{status: "repaired", contract: "json@1", repairs: 1, text: `{"a":1}`, obj: obj(`{"response":"{\"a\":1}"}`),
			corrections: obj(`[{"path":"1:7","rung":"local","before":",","after":"","kind":"minor","fixer":"remove_extra_comma"}]`)}},
		{"with no corrections", &result{status: "valid", contract: "json@1", text: `{"a":1}`, obj: obj(`{"response":"{\"a\":1}"}`),
			corrections: obj(`[]`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeEntry(encodeEntry(tt.res))
			if err != nil {
				t.Fatalf("decodeEntry(encodeEntry(%+v)) = %v", tt.res, err)
			}
			if got.status != tt.res.status || got.contract != tt.res.contract || got.repairs != tt.res.repairs || got.text != tt.res.text {
				t.Errorf("decoded %+v, want %+v", got, tt.res)
			}
			if a, b := string(strictjson.Marshal(got.obj)), string(strictjson.Marshal(tt.res.obj)); a != b {
				t.Errorf("obj %s, want %s", a, b)
			}
			if (got.corrections == nil) != (tt.res.corrections == nil) {
				t.Fatalf("corrections %v, want %v", got.corrections, tt.res.corrections)
			}
			if tt.res.corrections != nil {
				if a, b := string(strictjson.Marshal(got.corrections)), string(strictjson.Marshal(tt.res.corrections)); a != b {
					t.Errorf("corrections %s, want %s", a, b)
				}
			}
		})
	}
	if _, err := decodeEntry([]byte(`{"status":"valid","obj":{},"corrections":{}}`)); err == nil {
		t.Error("decodeEntry accepts corrections that are not a list")
	}
}

// FuzzDecodeEntry: a stored entry from anywhere (a Redis shared with
// other versions, a corrupted value) is decoded or refused without a
// panic, and what decodes encodes to an entry that decodes the same.
func FuzzDecodeEntry(f *testing.F) {
	f.Add(`{"status":"valid","contract":"json@1","repairs":0,"text":"{}","obj":{"response":"{}"}}`)
	f.Add(`{"status":"repaired","contract":"json@1","repairs":1,"text":"{\"a\":1}","obj":{"response":"{\"a\":1}"},` +
		`"corrections":[{"path":"1:7","rung":"local","before":",","after":"","kind":"minor"}]}`)
	f.Add(`{"status":"valid","obj":{},"corrections":null}`)
	f.Add(`{"status":"valid","obj":[],"corrections":[]}`)
	f.Fuzz(func(t *testing.T, s string) {
		res, err := decodeEntry([]byte(s))
		if err != nil {
			return
		}
		again, err := decodeEntry(encodeEntry(res))
		if err != nil {
			t.Fatalf("re-encoded entry of %q does not decode: %v", s, err)
		}
		if a, b := string(encodeEntry(again)), string(encodeEntry(res)); a != b {
			t.Fatalf("entry changed by a round trip:\n%s\n%s", a, b)
		}
	})
}
