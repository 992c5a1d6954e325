// Command access compares, side by side in one run, a pass-through
// request through a gateway with no access section and the same request
// with an API key: the key check alone, with the memory limiter (request,
// token and concurrency limits that never refuse), and with the Redis
// limiter. It prints p50 and p99 at one connection, requests per second at
// sixteen, and the latency each adds to the gateway without keys. It starts
// everything it measures on loopback: a fake Ollama, the gateways and a
// redis-server (Debian's; the Redis row is left out with a note when it is
// missing).
//
//	go run ./bench/access [-n 3000] [-c 16] [-d 5s]
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/internal/benchgateway"
	"github.com/contractgateway/gateway/internal/benchload"
)

// answer is the fake upstream's non-stream /api/generate answer, at once.
const answer = `{"model":"m","created_at":"2025-01-01T00:00:00Z","response":"{\"title\":\"Python basics\",\"score\":42}","done":true,"done_reason":"stop","eval_count":20,"prompt_eval_count":5}`

const body = `{"model":"llama3.2","prompt":"Give me a small JSON document.","stream":false,"options":{"temperature":0}}`

func main() {
	load := benchload.LoadFlags()
	flag.Parse()
	log.SetFlags(0)

	up := benchload.FixedUpstream(answer)
	defer up.Close()

	key, sum := access.NewKey()
	auth := http.Header{"Authorization": {"Bearer " + key}}
	// Limits that never refuse over the run, so that every request pays
	// for the limiter and none is a 429.
	limits := config.AccessLimits{RequestsPerMinute: 1 << 30, TokensPerMinute: 1 << 30, Concurrent: 1 << 20}
	type target struct {
		name, url string
		header    http.Header
	}
	open := startGateway(up.URL, "", nil)
	defer open.Close()
	checkOnly := startGateway(up.URL, "", &config.AccessKey{Name: "bench", SHA256: sum, Models: []string{"llama3.2*"}})
	defer checkOnly.Close()
	mem := startGateway(up.URL, "", &config.AccessKey{Name: "bench", SHA256: sum, Models: []string{"llama3.2*"}, Limits: limits})
	defer mem.Close()
	targets := []target{
		{"no access", open.URL, nil},
		{"key check", checkOnly.URL, auth},
		{"key+memory", mem.URL, auth},
	}
	if addr, stop, err := benchload.StartRedis(); err != nil {
		fmt.Printf("redis: %v (Redis row left out)\n", err)
	} else {
		defer stop()
		red := startGateway(up.URL, "redis://"+addr+"/0", &config.AccessKey{Name: "bench", SHA256: sum, Models: []string{"llama3.2*"}, Limits: limits})
		defer red.Close()
		targets = append(targets, target{"key+redis", red.URL, auth})
	}

	type row struct {
		name string
		benchload.Figures
	}
	var rows []row
	for _, t := range targets {
		rows = append(rows, row{t.name, load.Measure(func(cl *http.Client) { send(cl, t.url, t.header) })})
	}
	fmt.Printf("%-12s %10s %10s %10s %12s %10s %10s\n", "target", "p50 ms", "p99 ms", "rps c="+fmt.Sprint(load.C), "added p50 ms", "p50 ratio", "rps ratio")
	base := rows[0]
	for _, r := range rows {
		fmt.Printf("%-12s %10.3f %10.3f %10.0f %12.3f %10.2f %10.2f\n", r.name, r.P50, r.P99, r.RPS, r.P50-base.P50, r.P50/base.P50, r.RPS/base.RPS)
	}
	fmt.Println("ratios and added latency are to \"no access\" (same pass-through request, upstream answering at once)")
}

func startGateway(upstream, redisURL string, key *config.AccessKey) *benchgateway.Gateway {
	cfg := config.Default()
	cfg.Upstream = upstream
	cfg.Cache.Redis = redisURL
	if key != nil {
		cfg.Access.Keys = []config.AccessKey{*key}
	}
	return benchgateway.Start(cfg)
}

// send sends the benchmark's request.
func send(client *http.Client, url string, h http.Header) {
	benchload.Send(client, url, body, h)
}
