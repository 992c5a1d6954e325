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
	"fmt"
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
	load, up := benchload.Start(answer)
	defer up.Close()

	key, sum := access.NewKey()
	auth := http.Header{"Authorization": {"Bearer " + key}}
	// Limits that never refuse over the run, so that every request pays
	// for the limiter and none is a 429.
	limits := config.AccessLimits{RequestsPerMinute: 1 << 30, TokensPerMinute: 1 << 30, Concurrent: 1 << 20}
	open := startGateway(up.URL, "", nil)
	defer open.Close()
	checkOnly := startGateway(up.URL, "", &config.AccessKey{Name: "bench", SHA256: sum, Models: []string{"llama3.2*"}})
	defer checkOnly.Close()
	mem := startGateway(up.URL, "", &config.AccessKey{Name: "bench", SHA256: sum, Models: []string{"llama3.2*"}, Limits: limits})
	defer mem.Close()
	targets := []benchload.Target{
		{Name: "no access", URL: open.URL},
		{Name: "key check", URL: checkOnly.URL, Header: auth},
		{Name: "key+memory", URL: mem.URL, Header: auth},
	}
	if addr, stop, err := benchload.StartRedis(); err != nil {
		fmt.Printf("redis: %v (Redis row left out)\n", err)
	} else {
		defer stop()
		red := startGateway(up.URL, "redis://"+addr+"/0", &config.AccessKey{Name: "bench", SHA256: sum, Models: []string{"llama3.2*"}, Limits: limits})
		defer red.Close()
		targets = append(targets, benchload.Target{Name: "key+redis", URL: red.URL, Header: auth})
	}

	load.Compare(targets, send)
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

// send sends the benchmark's request to t.
func send(client *http.Client, t benchload.Target) {
	benchload.Send(client, t.URL, body, t.Header)
}
