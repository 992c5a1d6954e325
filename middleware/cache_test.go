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

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/cache"
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
	routes := builtinRoutes(t)
	cfg := DefaultGuardConfig
	cfg.Resolver, cfg.Upstream = routes, up
	cfg.Cache = NewCache(cache.NewMemory(cache.MemoryConfig{}))
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
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
