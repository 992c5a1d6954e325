package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/benchupstream"
)

// BenchmarkPassThrough compares the gateway with a bare ReverseProxy over
// the same upstream, for a small JSON answer and 20-chunk streams of every
// text API (unguarded: they pass through). Each iteration is one whole
// request over loopback.
func BenchmarkPassThrough(b *testing.B) {
	up := httptest.NewServer(benchupstream.Upstream())
	defer up.Close()
	target, _ := url.Parse(up.URL)

	bare := httptest.NewServer(benchupstream.BareProxy(target))
	defer bare.Close()

	cfg := config.Default()
	cfg.Upstream = up.URL
	// The whole gateway, guard included: an unguarded request on a guarded
	// path is read by the guard before it passes. Info level: each request
	// formats its log line, as in production.
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
		{"openai-chat", http.MethodPost, "/v1/chat/completions", `{"model":"stories","messages":[{"role":"user","content":"Once"}],"stream":true}`},
		{"completions", http.MethodPost, "/v1/completions", `{"model":"stories","prompt":"Once","stream":true}`},
		{"responses", http.MethodPost, "/v1/responses", `{"model":"stories","input":"Once","stream":true}`},
		{"messages", http.MethodPost, "/v1/messages", `{"model":"stories","max_tokens":64,"messages":[{"role":"user","content":"Once"}],"stream":true}`},
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
