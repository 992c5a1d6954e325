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
	"log"
	"net/http"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/benchgateway"
	"github.com/contractgateway/gateway/internal/benchload"
)

// answer is the fake upstream's non-stream /api/generate answer: a small
// valid JSON document, at once.
const answer = `{"model":"m","created_at":"2025-01-01T00:00:00Z","response":"{\"title\":\"Python basics\",\"score\":42,\"tags\":[\"a\",\"b\",\"c\"]}","done":true,"done_reason":"stop","eval_count":20,"prompt_eval_count":5}`

const body = `{"model":"m","prompt":"Give me a small JSON document.","stream":false,"options":{"temperature":0}}`

func main() {
	load := benchload.LoadFlags()
	flag.Parse()
	log.SetFlags(0)

	up := benchload.FixedUpstream(answer)
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
		name string
		benchload.Figures
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
		rows = append(rows, row{t.name, load.Measure(func(cl *http.Client) { send(cl, t.url, t.header) })})
	}
	fmt.Printf("%-14s %10s %10s %10s %10s %10s\n", "target", "p50 ms", "p99 ms", "rps c="+fmt.Sprint(load.C), "p50 ratio", "rps ratio")
	base := rows[0]
	for _, r := range rows {
		fmt.Printf("%-14s %10.3f %10.3f %10.0f %10.2f %10.2f\n", r.name, r.P50, r.P99, r.RPS, r.P50/base.P50, r.RPS/base.RPS)
	}
	fmt.Println("ratios are to pass-through (same request, unguarded, upstream answering at once)")
}

func startGateway(upstream, redisURL string) *benchgateway.Gateway {
	cfg := config.Default()
	cfg.Upstream = upstream
	if redisURL != "" {
		// Redis alone, so that every hit is a Redis round trip (with a
		// memory tier, repeated hits are memory hits).
		cfg.Cache.Redis, cfg.Cache.MaxBytes = redisURL, -1
	}
	return benchgateway.Start(cfg)
}

// send sends the benchmark's request and returns its X-Cache.
func send(client *http.Client, url string, h http.Header) string {
	return benchload.Send(client, url, body, h).Get("X-Cache")
}
