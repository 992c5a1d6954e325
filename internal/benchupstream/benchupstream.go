// Package benchupstream holds the two fixed parts of the pass-through
// benchmarks, shared by the testing.B benchmarks in gateway and the
// side-by-side program under bench/proxy: a fake Ollama that answers
// instantly, and the bare reverse proxy the gateway is compared with.
package benchupstream

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// TagsBody is the fake upstream's /api/tags answer.
var TagsBody = []byte(`{"models":[{"name":"stories:latest","model":"stories:latest","modified_at":"2025-01-01T00:00:00Z","size":1185376,"digest":"0d5b2e3a8f1c","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"260K","quantization_level":"F32"}}]}`)

// Upstream answers like Ollama, instantly: GET /api/tags, POST
// /api/generate (20 NDJSON chunks, each flushed, when streaming), and POST
// /api/pull which sends one status line and then holds the stream open
// until the client leaves (for the idle-streams figure).
func Upstream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/tags", "/api/version":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(TagsBody)
		case "/api/generate":
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-ndjson")
			f := w.(http.Flusher)
			for i := range 20 {
				fmt.Fprintf(w, `{"model":"stories","created_at":"2025-01-01T00:00:00.000000Z","response":" word%d","done":false}`+"\n", i)
				f.Flush()
			}
			io.WriteString(w, `{"model":"stories","created_at":"2025-01-01T00:00:00.000000Z","response":"","done":true,"done_reason":"stop","total_duration":1000000,"eval_count":20}`+"\n")
		case "/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages":
			// The OpenAI and Anthropic compatible APIs stream server-sent
			// events; the pass-through never reads them.
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for i := range 20 {
				fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chunk\",\"created\":1,\"model\":\"stories\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word%d\"},\"finish_reason\":null}]}\n\n", i)
				f.Flush()
			}
			io.WriteString(w, "data: [DONE]\n\n")
		case "/api/pull":
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"status":"pulling manifest"}`+"\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Minute):
			}
		default:
			http.NotFound(w, r)
		}
	})
}

// BareProxy is the baseline: a ReverseProxy as the Go documentation shows
// it, with the gateway's connection pool settings so that only the
// gateway's own work differs.
func BareProxy(target *url.URL) http.Handler {
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
		ErrorLog:      log.New(io.Discard, "", 0),
	}
}
