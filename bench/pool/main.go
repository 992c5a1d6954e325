// Command pool compares, side by side in one run, a gateway over one
// paced fake Ollama with a gateway over two of them (a pool): each fake
// runs one generation at a time (one slot, as an Ollama with
// OLLAMA_NUM_PARALLEL=1) and takes -d for it, so the pool should serve
// nearly twice as many requests. Then one of the two is killed in the
// middle of a run: the requests that fail are counted, apart from the
// streams already under way on the killed one (which no gateway can save;
// they are never replayed).
//
//	go run ./bench/pool [-c 8] [-d 20ms] [-t 4s]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/benchgateway"
	"github.com/contractgateway/gateway/internal/benchload"
)

func main() {
	c := flag.Int("c", 8, "concurrent clients")
	d := flag.Duration("d", 20*time.Millisecond, "how long one generation holds its upstream's one slot")
	t := flag.Duration("t", 4*time.Second, "duration of each run")
	flag.IntVar(&guardEvery, "guard", 2, "every Nth request is guarded (X-Contract: json); 0: none")
	flag.Parse()
	log.SetFlags(0)

	one := []*httptest.Server{paced(*d)}
	two := []*httptest.Server{paced(*d), paced(*d)}
	defer closeAll(one, two)
	gwOne := gatewayOver(one)
	defer gwOne.Close()
	gwTwo := gatewayOver(two)
	defer gwTwo.Close()

	fmt.Printf("%d clients, a generation holds its upstream's one slot for %v, %v per run\n\n", *c, *d, *t)
	fmt.Printf("%-34s %12s %10s %10s %8s\n", "", "requests/s", "p50", "p99", "errors")
	rOne := run(gwOne.URL, *c, *t, nil)
	rTwo := run(gwTwo.URL, *c, *t, nil)
	rOne.print("one upstream")
	rTwo.print("pool of two")
	fmt.Printf("\nthroughput, pool of two / one upstream: %.2f×; p99 %.2f×\n", rTwo.rps/rOne.rps, rTwo.p99/rOne.p99)

	// One upstream of a fresh pool dies halfway through the run.
	killed := []*httptest.Server{paced(*d), paced(*d)}
	defer closeAll(killed)
	gwKill := gatewayOver(killed)
	defer gwKill.Close()
	rKill := run(gwKill.URL, *c, *t, func() {
		killed[0].Listener.Close()
		killed[0].CloseClientConnections()
	})
	rKill.print("pool of two, one killed halfway")
	fmt.Printf("\nwith one upstream killed: %d errors beyond the %d streams already under way on it (target 0)\n", rKill.errors, rKill.cut)
}

// paced is a fake Ollama with model m loaded and one slot: a generation
// waits for the slot, then streams three chunks over d.
func paced(d time.Duration) *httptest.Server {
	slot := make(chan struct{}, 1)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			io.WriteString(w, `{"version":"0.17.4"}`)
		case "/api/tags", "/api/ps":
			io.WriteString(w, `{"models":[{"name":"m:latest","model":"m:latest"}]}`)
		case "/api/generate":
			io.Copy(io.Discard, r.Body)
			select {
			case slot <- struct{}{}:
			case <-r.Context().Done():
				return
			}
			defer func() { <-slot }()
			w.Header().Set("Content-Type", "application/x-ndjson")
			for _, tok := range []string{`{\"ok\"`, `:true`, `}`} {
				time.Sleep(d / 3)
				fmt.Fprintf(w, `{"model":"m","response":"%s","done":false}`+"\n", tok)
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, `{"model":"m","response":"","done":true,"done_reason":"stop","eval_count":3}`+"\n")
		default:
			http.NotFound(w, r)
		}
	}))
}

func closeAll(lists ...[]*httptest.Server) {
	for _, l := range lists {
		for _, s := range l {
			s.CloseClientConnections()
			s.Close()
		}
	}
}

// gatewayOver starts a gateway over the pool of ups.
func gatewayOver(ups []*httptest.Server) *benchgateway.Gateway {
	cfg := config.Default()
	cfg.Upstream = ""
	for _, u := range ups {
		cfg.Upstreams = append(cfg.Upstreams, config.UpstreamServer{URL: u.URL})
	}
	cfg.UpstreamHealthInterval = 500 * time.Millisecond
	cfg.Cache.MaxBytes = -1 // every guarded request asks an upstream
	return benchgateway.Start(cfg)
}

var guardEvery int

type result struct {
	rps, p50, p99 float64
	errors, cut   int64
}

func (r result) print(name string) {
	fmt.Printf("%-34s %12.1f %8.1fms %8.1fms %8d\n", name, r.rps, r.p50, r.p99, r.errors+r.cut)
}

// run sends requests from c clients for d, every guardEvery-th guarded
// and the rest passed through, all streamed; kill, when set, runs
// halfway. A request that fails before its upstream's answer began is an
// error; one whose upstream stream broke after it began (the client's
// stream, or the guard's call) is cut.
func run(url string, c int, d time.Duration, kill func()) result {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	var mu sync.Mutex
	var lat []time.Duration
	var errs, cut, n atomic.Int64
	if kill != nil {
		time.AfterFunc(d/2, kill)
	}
	rps := benchload.Throughput(c, d, func() {
		i := n.Add(1)
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/api/generate", strings.NewReader(`{"model":"m","prompt":"p"}`))
		if guardEvery > 0 && i%int64(guardEvery) == 0 {
			req.Header.Set("X-Contract", "json")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			if errs.Add(1) <= 3 {
				log.Printf("  error: %v", err)
			}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			if strings.Contains(string(b), "upstream response incomplete") {
				// A guarded call cut while the guard read it: a stream
				// under way on the killed upstream, not replayed.
				cut.Add(1)
				return
			}
			if errs.Add(1) <= 3 {
				log.Printf("  error: %d %s (guarded %v)", resp.StatusCode, strings.TrimSpace(string(b)), req.Header.Get("X-Contract") != "")
			}
			return
		}
		ok := false
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, `"error"`) {
				break
			}
			if strings.Contains(line, `"done":true`) {
				ok = true
			}
		}
		if !ok {
			cut.Add(1)
			return
		}
		mu.Lock()
		lat = append(lat, time.Since(start))
		mu.Unlock()
	})
	client.CloseIdleConnections()
	return result{rps: rps, p50: benchload.Percentile(lat, 50), p99: benchload.Percentile(lat, 99), errors: errs.Load(), cut: cut.Load()}
}
