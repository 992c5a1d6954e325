// Command cache compares, side by side in one run, a cache hit through the
// whole gateway with the same request passed through to an upstream that
// answers at once: p50 and p99 at one connection, requests per second at
// sixteen, for the memory store and for Redis. It starts everything it
// measures on loopback: a fake Ollama, two gateways (memory, Redis) and a
// redis-server (Debian's; skipped with a note when it is missing).
//
//	go run ./bench/cache [-n 3000] [-c 16] [-d 5s]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway"
	"github.com/contractgateway/gateway/internal/benchload"
)

// answer is the fake upstream's non-stream /api/generate answer: a small
// valid JSON document, at once.
const answer = `{"model":"m","created_at":"2025-01-01T00:00:00Z","response":"{\"title\":\"Python basics\",\"score\":42,\"tags\":[\"a\",\"b\",\"c\"]}","done":true,"done_reason":"stop","eval_count":20,"prompt_eval_count":5}`

const body = `{"model":"m","prompt":"Give me a small JSON document.","stream":false,"options":{"temperature":0}}`

func main() {
	n := flag.Int("n", 3000, "sequential requests per target at c=1")
	c := flag.Int("c", 16, "connections for the throughput figure")
	d := flag.Duration("d", 5*time.Second, "duration of the throughput run per target")
	flag.Parse()
	log.SetFlags(0)

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, answer)
	}))
	defer up.Close()

	type target struct {
		name, url string
		header    http.Header
	}
	mem := startGateway(up.URL, "")
	defer mem.Close()
	targets := []target{
		{"pass-through", mem.URL, nil},
		{"memory hit", mem.URL, http.Header{"X-Contract": {"json"}}},
	}
	if addr, stop, err := benchload.StartRedis(); err != nil {
		fmt.Printf("redis: %v (Redis rows left out)\n", err)
	} else {
		defer stop()
		red := startGateway(up.URL, "redis://"+addr+"/0")
		defer red.Close()
		targets = append(targets, target{"redis hit", red.URL, http.Header{"X-Contract": {"json"}}})
	}

	type row struct {
		name     string
		p50, p99 float64
		rps      float64
	}
	var rows []row
	for _, t := range targets {
		// The first request fills the cache; the X-Cache of the next says
		// whether it holds.
		if t.header != nil {
			send(http.DefaultClient, t.url, t.header)
			if got := send(http.DefaultClient, t.url, t.header); got != "hit" {
				log.Fatalf("%s: X-Cache %q after the first request, want hit", t.name, got)
			}
		}
		seq := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		lat := benchload.Sequential(*n, func() { send(seq, t.url, t.header) })
		seq.CloseIdleConnections()
		par := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c}}
		rps := benchload.Throughput(*c, *d, func() { send(par, t.url, t.header) })
		par.CloseIdleConnections()
		rows = append(rows, row{t.name, benchload.Percentile(lat, 50), benchload.Percentile(lat, 99), rps})
	}
	fmt.Printf("%-14s %10s %10s %10s %10s %10s\n", "target", "p50 ms", "p99 ms", "rps c="+fmt.Sprint(*c), "p50 ratio", "rps ratio")
	base := rows[0]
	for _, r := range rows {
		fmt.Printf("%-14s %10.3f %10.3f %10.0f %10.2f %10.2f\n", r.name, r.p50, r.p99, r.rps, r.p50/base.p50, r.rps/base.rps)
	}
	fmt.Println("ratios are to pass-through (same request, unguarded, upstream answering at once)")
}

func startGateway(upstream, redisURL string) *httptest.Server {
	cfg := config.Default()
	cfg.Upstream = upstream
	if redisURL != "" {
		// Redis alone, so that every hit is a Redis round trip (with a
		// memory tier, repeated hits are memory hits).
		cfg.Cache.Redis, cfg.Cache.MaxBytes = redisURL, -1
	}
	// One line per request is the production default; the figure includes it.
	srv, err := gateway.Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		log.Fatal(err)
	}
	return httptest.NewServer(srv.Handler())
}

func newRequest(url string, h http.Header) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url+"/api/generate", strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	return req
}

func send(client *http.Client, url string, h http.Header) string {
	resp, err := client.Do(newRequest(url, h))
	if err != nil {
		log.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("%s: status %d", url, resp.StatusCode)
	}
	return resp.Header.Get("X-Cache")
}
