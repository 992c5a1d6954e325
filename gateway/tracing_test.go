package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
)

// traceparents records the traceparent header of every upstream call.
type traceparents struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (h *traceparents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Get("traceparent"))
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

func TestTraceOfRepairedRequest(t *testing.T) {
	const marker = "MARKER-9c1e"
	fault := strings.Replace(readFixture(t, "mcq_content_fault.json"), "Python basics", "Python basics "+marker, 1)
	up := &traceparents{next: &scriptedUpstream{answers: []string{fault, readFixture(t, "mcq_valid.json")}}}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	cfg := config.Default()
	cfg.Upstream = ups.URL
	srv, err := build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), tp)
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)

	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"`+marker+`"}`,
		map[string]string{"X-Contract": "mcq", "traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") != "repaired" {
		t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("X-Contract-Status"), body)
	}

	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	var root tracetest.SpanStub
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
		if strings.HasPrefix(s.Name, "guard ") {
			root = s
		}
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), marker) {
				t.Errorf("span %s holds text: %s", s.Name, kv.Key)
			}
		}
	}
	if root.Name != "guard /api/generate" {
		t.Fatalf("no request span in %d spans", len(spans))
	}
	if root.SpanContext.TraceID().String() != clientTrace || root.Parent.SpanID().String() != clientSpan {
		t.Errorf("request span not in the client's trace: %s parent %s", root.SpanContext.TraceID(), root.Parent.SpanID())
	}
	// The tree, as "parent > child" paths.
	var paths []string
	var path func(s tracetest.SpanStub) string
	path = func(s tracetest.SpanStub) string {
		if p, ok := byID[s.Parent.SpanID().String()]; ok {
			return path(p) + " > " + s.Name
		}
		return s.Name
	}
	for _, s := range spans {
		paths = append(paths, path(s))
	}
	slices.Sort(paths)
	want := []string{
		"guard /api/generate",
		"guard /api/generate > cache",
		"guard /api/generate > cache > ladder",
		"guard /api/generate > cache > ladder > text_completion m",
		"guard /api/generate > cache > upstream",
		"guard /api/generate > cache > upstream > text_completion m",
		"guard /api/generate > decode",
		"guard /api/generate > encode",
		"guard /api/generate > resolve",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("span tree:\n%s\nwant\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}

	a := attrs(root.Attributes)
	for k, v := range map[string]string{"contract.id": "mcq@1", "contract.status": "repaired", "gen_ai.request.model": "m",
		"gen_ai.operation.name": "text_completion", "contract.cache": "miss"} {
		if a[k].AsString() != v {
			t.Errorf("request span %s = %q, want %q", k, a[k].Emit(), v)
		}
	}
	if got := a["contract.violations_before"].AsStringSlice(); !slices.Equal(got, []string{"ANSWER_RANGE"}) {
		t.Errorf("violations_before = %q", got)
	}
	if a["gen_ai.usage.input_tokens"].AsInt64() != 14 || a["gen_ai.usage.output_tokens"].AsInt64() != 84 || a["contract.llm_calls"].AsInt64() != 1 {
		t.Errorf("request span tokens %d/%d, llm calls %d", a["gen_ai.usage.input_tokens"].AsInt64(), a["gen_ai.usage.output_tokens"].AsInt64(), a["contract.llm_calls"].AsInt64())
	}
	// Each model call is a client span with its tokens, and the upstream
	// got its traceparent.
	var calls []string
	for _, s := range spans {
		if s.Name != "text_completion m" {
			continue
		}
		ca := attrs(s.Attributes)
		if ca["gen_ai.usage.input_tokens"].AsInt64() != 7 || ca["gen_ai.usage.output_tokens"].AsInt64() != 42 || ca["gen_ai.request.model"].AsString() != "m" ||
			!strings.HasPrefix(ca["gateway.upstream"].AsString(), "http://127.0.0.1:") {
			t.Errorf("model call span attributes: %v", s.Attributes)
		}
		calls = append(calls, "00-"+clientTrace+"-"+s.SpanContext.SpanID().String()+"-01")
	}
	up.mu.Lock()
	seen := slices.Clone(up.seen)
	up.mu.Unlock()
	slices.Sort(seen)
	slices.Sort(calls)
	if !slices.Equal(seen, calls) {
		t.Errorf("upstream traceparents %q, want %q", seen, calls)
	}
}

func TestTracingOffSendsNoTraceparent(t *testing.T) {
	up := &traceparents{next: &scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}}}
	gw := newGuardedGateway(t, up, nil)
	post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"p"}`, map[string]string{"X-Contract": "mcq"})
	if len(up.seen) != 1 || up.seen[0] != "" {
		t.Errorf("traceparents = %q, want one empty", up.seen)
	}
}

func TestTracingExportsOTLP(t *testing.T) {
	var mu sync.Mutex
	var got []*coltracepb.ExportTraceServiceRequest
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("export %s %s", r.URL.Path, r.Header.Get("Content-Type"))
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			t.Errorf("export body: %v", err)
		}
		mu.Lock()
		got = append(got, &req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	t.Cleanup(collector.Close)

	ups := httptest.NewServer(&scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}})
	t.Cleanup(ups.Close)
	cfg := config.Default()
	cfg.Upstream = ups.URL
	cfg.Tracing.Endpoint = collector.URL
	cfg.Tracing.ServiceName = "cg-test"
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"p"}`, map[string]string{"X-Contract": "mcq"})
	gw.Close()
	srv.Close() // flushes the batch

	mu.Lock()
	defer mu.Unlock()
	names := map[string]bool{}
	service := ""
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names[s.Name] = true
					if s.Name == "guard /api/generate" {
						for _, kv := range s.Attributes {
							if kv.Key == "contract.status" && kv.GetValue().GetStringValue() != "valid" {
								t.Errorf("contract.status = %v", kv.GetValue())
							}
						}
					}
				}
			}
		}
	}
	if service != "cg-test" || !names["guard /api/generate"] || !names["text_completion m"] {
		t.Errorf("exported service %q, spans %v", service, names)
	}
}

// TestTraceNamesTheKey checks that a guarded request's span names the API
// key the request came with, and holds no secret.
func TestTraceNamesTheKey(t *testing.T) {
	const secret = "cg-trace-secret-7f3a"
	ups := httptest.NewServer(&scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}})
	t.Cleanup(ups.Close)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	cfg := config.Default()
	cfg.Upstream = ups.URL
	cfg.Access = config.Access{Keys: []config.AccessKey{{Name: "quiz-app", SHA256: access.Hash(secret)}}}
	srv, err := build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), tp)
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","stream":false,"prompt":"p"}`,
		map[string]string{"X-Contract": "mcq", "Authorization": "Bearer " + secret})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var root tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, "guard ") {
			root = s
		}
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), secret) {
				t.Errorf("span %s holds the key's secret in %s", s.Name, kv.Key)
			}
		}
	}
	if got := attrs(root.Attributes)["gateway.key.name"].AsString(); got != "quiz-app" {
		t.Errorf("request span gateway.key.name = %q, want quiz-app", got)
	}
}
