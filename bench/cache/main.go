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
	load, up := benchload.Start(answer)
	defer up.Close()

	mem := startGateway(up.URL, "")
	defer mem.Close()
	hit := http.Header{"X-Contract": {"json"}}
	targets := []benchload.Target{
		{Name: "pass-through", URL: mem.URL},
		{Name: "memory hit", URL: mem.URL, Header: hit},
	}
	if addr, stop, err := benchload.StartRedis(); err != nil {
		fmt.Printf("redis: %v (Redis rows left out)\n", err)
	} else {
		defer stop()
		red := startGateway(up.URL, "redis://"+addr+"/0")
		defer red.Close()
		targets = append(targets, benchload.Target{Name: "redis hit", URL: red.URL, Header: hit})
	}

	// The first request to a guarded target fills its cache; the X-Cache
	// of the next says whether it holds.
	for _, t := range targets[1:] {
		send(http.DefaultClient, t)
		if got := send(http.DefaultClient, t).Get("X-Cache"); got != "hit" {
			log.Fatalf("%s: X-Cache %q after the first request, want hit", t.Name, got)
		}
	}
	load.Compare(targets, func(cl *http.Client, t benchload.Target) { send(cl, t) })
	fmt.Println("ratios and added latency are to pass-through (same request, unguarded, upstream answering at once)")
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

// send sends the benchmark's request to t and returns the answer's
// header.
func send(client *http.Client, t benchload.Target) http.Header {
	return benchload.Send(client, t.URL, body, t.Header)
}
