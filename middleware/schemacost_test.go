package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/schemagen"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// fanOutFormat is the report's schema: each of `levels` levels names the
// next one `branches` times through allOf and $ref, so 1.7 KB (2×26) make
// the validator walk 2^27 subschemas for one value.
func fanOutFormat(branches, levels int) string { return schemagen.FanOut(branches, levels) }

// TestFormatFanOutRefused: a format schema that passes the text limits but
// expands past the cap through $ref and allOf is the client's error (400,
// in Ollama's shape, naming the cause) and the upstream is never asked; an
// ordinary schema is still guarded. The upstream answers the fan-out with
// no JSON, so that a gateway that lets it through fails fast instead of
// validating for minutes.
func TestFormatFanOutRefused(t *testing.T) {
	tests := []struct {
		name      string
		format    string
		answer    string
		status    int
		calls     int64
		errorPart string
	}{
		{"2x26 fan-out", fanOutFormat(2, 26), "no JSON here", http.StatusBadRequest, 0, "format schema too complex"},
		{"3x14 fan-out", fanOutFormat(3, 14), "no JSON here", http.StatusBadRequest, 0, "format schema too complex"},
		{"ordinary schema", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`, `{"a":1}`, http.StatusOK, 1, ""},
		{"small fan-out", fanOutFormat(2, 6), `{"a":1}`, http.StatusOK, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := contracts.DefaultSchemaLimits.Check([]byte(tt.format)); err != nil {
				t.Fatalf("the format is over the text limits (%v): the test proves nothing", err)
			}
			var calls atomic.Int64
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				b, _ := json.Marshal(map[string]any{"model": "m", "response": tt.answer, "done": true})
				w.Write(b)
			}))
			defer up.Close()
			gw := mount(t, up.URL, nil)
			body := `{"model":"m","prompt":"p","stream":false,"format":` + tt.format + `}`
			resp, err := http.Post(gw.URL+"/api/generate", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || calls.Load() != tt.calls {
				t.Fatalf("POST /api/generate = %d %s after %d upstream calls; want %d after %d", resp.StatusCode, b, calls.Load(), tt.status, tt.calls)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("body %s: %v", b, err)
			}
			if msg, _ := m["error"].(string); !strings.Contains(msg, tt.errorPart) || (tt.errorPart == "") != (msg == "") {
				t.Errorf("error = %q, want one containing %q", msg, tt.errorPart)
			}
		})
	}
}

// countingPack counts the validations it takes part in.
type countingPack struct{ n atomic.Int64 }

func (p *countingPack) CheckParams(validators.Params) error { return nil }
func (p *countingPack) Check(*strictjson.Value, validators.Params, *validators.Emitter) {
	p.n.Add(1)
}

// resolverFunc adapts a function to Resolver.
type resolverFunc func(route.Lookup) (*route.Route, error)

func (f resolverFunc) Resolve(l route.Lookup) (*route.Route, error) { return f(l) }

// upstreamFunc adapts a function to Upstream.
type upstreamFunc func(*http.Request) (*http.Response, error)

func (f upstreamFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// guardApp is the guard in front of a handler that fails the test if a
// request reaches it.
func guardApp(t *testing.T, cfg GuardConfig) *echo.Echo {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	guard, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler
	e.Use(guard)
	e.Any("/*", func(c echo.Context) error {
		t.Errorf("%s %s passed through", c.Request().Method, c.Request().URL)
		return nil
	})
	return e
}

// TestClientGoneCompilesNothing: a request whose client has already left
// compiles no format schema and asks nothing upstream.
func TestClientGoneCompilesNothing(t *testing.T) {
	routes := builtinRoutes(t)
	var calls atomic.Int64
	cfg := DefaultGuardConfig
	cfg.Resolver = routes
	cfg.Upstream = upstreamFunc(func(*http.Request) (*http.Response, error) {
		calls.Add(1)
		return nil, context.Canceled
	})
	e := guardApp(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	body := `{"model":"m","prompt":"p","stream":false,"format":{"type":"object","title":"gone"}}`
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/generate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	e.ServeHTTP(httptest.NewRecorder(), req)
	if n, _ := routes.AdHocSchemas(); n != 0 || calls.Load() != 0 {
		t.Errorf("after a gone client: %d schemas compiled, %d upstream calls; want none", n, calls.Load())
	}
}

// TestClientGoneDuringAnswerValidatesNothing: when the client leaves while
// the upstream answers, the answer is not validated (a schema at the cap
// still costs a walk per value, and the ladder validates several times).
func TestClientGoneDuringAnswerValidatesNothing(t *testing.T) {
	c, err := contracts.FromSchema([]byte(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	pack := &countingPack{}
	c.Rules = []string{"count"}
	v, err := validators.New(c, map[string]validators.RulePack{"count": pack})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := DefaultGuardConfig
	cfg.Resolver = resolverFunc(func(route.Lookup) (*route.Route, error) {
		return &route.Route{Name: "count", Validator: v, Params: validators.Params{}}, nil
	})
	cfg.Upstream = upstreamFunc(func(r *http.Request) (*http.Response, error) {
		cancel() // the client leaves; the answer is already here
		b, _ := json.Marshal(map[string]any{"model": "m", "response": `{"a":1}`, "done": true})
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: r}, nil
	})
	e := guardApp(t, cfg)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/generate",
		strings.NewReader(`{"model":"m","prompt":"p","stream":false}`))
	req.Header.Set("Content-Type", "application/json")
	e.ServeHTTP(httptest.NewRecorder(), req)
	if n := pack.n.Load(); n != 0 {
		t.Errorf("the answer of a gone client was validated %d times, want 0", n)
	}
}
