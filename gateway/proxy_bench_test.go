package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
)

// benchUpstream answers GET /api/tags with a small JSON document and POST
// /api/generate with an NDJSON stream of 20 chunks, each flushed.
func benchUpstream() http.Handler {
	tags := []byte(`{"models":[{"name":"stories:latest","model":"stories:latest","size":1185376,"digest":"0d5b2e3a","details":{"format":"gguf","family":"llama","parameter_size":"260K","quantization_level":"F32"}}]}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/tags":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(tags)
		case "/api/generate":
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-ndjson")
			f := w.(http.Flusher)
			for i := range 20 {
				fmt.Fprintf(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":"word%d ","done":false}`+"\n", i)
				f.Flush()
			}
			io.WriteString(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":"","done":true,"eval_count":20}`+"\n")
		default:
			http.NotFound(w, r)
		}
	})
}

// bareProxy is the baseline: a ReverseProxy as the Go docs show it, with
// the same connection pool settings as the gateway's.
func bareProxy(target *url.URL) http.Handler {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 256
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport:     t,
		FlushInterval: -1,
	}
}

// BenchmarkPassThrough compares the gateway with a bare ReverseProxy over
// the same upstream, for a small JSON answer and a 20-chunk stream. Each
// iteration is one whole request over loopback.
func BenchmarkPassThrough(b *testing.B) {
	up := httptest.NewServer(benchUpstream())
	defer up.Close()
	target, _ := url.Parse(up.URL)

	bare := httptest.NewServer(bareProxy(target))
	defer bare.Close()

	cfg := config.Default()
	cfg.Upstream = up.URL
	// Info level: each request formats its log line, as in production.
	srv, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()
	defer srv.CloseIdleConnections()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	defer client.CloseIdleConnections()

	scenarios := []struct {
		name, method, path, body string
	}{
		{"nonstream", http.MethodGet, "/api/tags", ""},
		{"stream", http.MethodPost, "/api/generate", `{"model":"stories","prompt":"Once","stream":true}`},
	}
	targets := []struct {
		name, url string
	}{
		{"direct", up.URL},
		{"bare", bare.URL},
		{"gateway", gw.URL},
	}
	for _, sc := range scenarios {
		for _, tg := range targets {
			b.Run(sc.name+"/"+tg.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req, _ := http.NewRequest(sc.method, tg.url+sc.path, strings.NewReader(sc.body))
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil {
						b.Fatal(err)
					}
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		}
	}
}
