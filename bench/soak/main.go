// Command soak holds N connections of mixed traffic against the gateway
// for D, then prints throughput, latency, errors, and the gateway's
// memory and goroutines before, during and after. The gateway runs as its
// own process (built from this checkout) so that its RSS is its own; the
// fake Ollama runs in this process and answers at once. Loopback only;
// every loop is bounded by D.
//
//	make soak                       # N=1000, D=60s
//	go run ./bench/soak -n 200 -d 20s
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "connections")
	d := flag.Duration("d", 60*time.Second, "duration of the load")
	idle := flag.Duration("idle", 5*time.Minute, "how long to sample the idle gateway after the load")
	flag.Parse()
	log.SetFlags(0)

	up := startUpstream()
	bin, cleanup := buildGateway()
	defer cleanup()
	gw, pid, stop := startGateway(bin, up)
	defer stop()

	tr := &http.Transport{MaxIdleConns: *n, MaxIdleConnsPerHost: *n, MaxConnsPerHost: *n, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	// A first guarded request fills the cache, so that later ones are a mix
	// of hits and whole guard runs.
	do(client, gw, 2)

	fmt.Printf("soak: %d connections for %s against %s (gateway pid %d)\n", *n, *d, gw, pid)
	sample := func(when string) {
		g, heap := runtimeFigures(gw)
		fmt.Printf("%-9s rss %7.1f MiB  heap in use %7.1f MiB  goroutines %6d\n", when, float64(rssKiB(pid))/1024, heap/(1<<20), g)
	}
	sample("before")

	ctx, cancel := context.WithTimeout(context.Background(), *d)
	defer cancel()
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	errs := map[string]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *n {
		wg.Go(func() {
			for k := i; ctx.Err() == nil; k++ {
				kind := k % 4
				t0 := time.Now()
				err := do(client, gw, kind)
				el := time.Since(t0)
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						errs[err.Error()]++
					}
				} else {
					lat[names[kind]] = append(lat[names[kind]], el)
				}
				mu.Unlock()
			}
		})
	}
	tick := time.NewTicker(5 * time.Second)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample(fmt.Sprintf("t+%ds", int(time.Since(start).Seconds())))
			}
		}
	}()
	wg.Wait()
	tick.Stop()
	elapsed := time.Since(start)

	total := 0
	var all []time.Duration
	fmt.Printf("%-22s %9s %9s %9s\n", "traffic", "requests", "p50 ms", "p99 ms")
	for _, name := range names {
		ls := lat[name]
		total += len(ls)
		all = append(all, ls...)
		fmt.Printf("%-22s %9d %9.2f %9.2f\n", name, len(ls), pct(ls, 50), pct(ls, 99))
	}
	fmt.Printf("%-22s %9d %9.2f %9.2f\n", "all", total, pct(all, 50), pct(all, 99))
	nerr := 0
	for _, c := range errs {
		nerr += c
	}
	fmt.Printf("rps %.0f, errors %d\n", float64(total)/elapsed.Seconds(), nerr)
	for e, c := range errs {
		fmt.Printf("  %6d  %s\n", c, e)
	}
	tr.CloseIdleConnections()
	// Idle: the gateway's pooled upstream connections (two goroutines
	// each) close after the transport's 90 s idle timeout; an idle process
	// allocates too little to start a GC, so its heap shrinks at the
	// runtime's forced GCs (every two minutes; pooled buffers survive the
	// first) and its RSS as the scavenger hands pages back.
	for i := range int(*idle / (10 * time.Second)) {
		time.Sleep(10 * time.Second)
		if (i+1)%3 == 0 {
			sample(fmt.Sprintf("idle+%ds", 10*(i+1)))
		}
	}
}

var names = []string{"pass-through tags", "pass-through stream", "guarded (whole guard)", "guarded stream (cache)"}

// do sends one request of kind and reads its answer.
func do(client *http.Client, gw string, kind int) error {
	var req *http.Request
	switch kind {
	case 0:
		req, _ = http.NewRequest(http.MethodGet, gw+"/api/tags", nil)
	case 1:
		req, _ = http.NewRequest(http.MethodPost, gw+"/api/generate", strings.NewReader(`{"model":"stories","prompt":"p"}`))
	case 2:
		req, _ = http.NewRequest(http.MethodPost, gw+"/api/generate", strings.NewReader(`{"model":"stories","prompt":"json please","stream":false}`))
		req.Header.Set("X-Contract", "json")
		req.Header.Set("Cache-Control", "no-cache")
	case 3:
		req, _ = http.NewRequest(http.MethodPost, gw+"/api/generate", strings.NewReader(`{"model":"stories","prompt":"json please"}`))
		req.Header.Set("X-Contract", "json")
	}
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return errors.New("client timeout")
		}
		return errors.New("transport: " + strings.TrimSpace(regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(err.Error(), "ADDR")))
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return errors.New("read: " + err.Error())
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d (%s)", resp.StatusCode, names[kind])
	}
	if kind >= 2 && resp.Header.Get("X-Contract-Status") != "valid" {
		return fmt.Errorf("contract status %q", resp.Header.Get("X-Contract-Status"))
	}
	return nil
}

// startUpstream is a fake Ollama answering at once: tags, a stream of 20
// chunks, or one object holding a small JSON document.
func startUpstream() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/api/tags":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"models":[{"name":"stories:latest","model":"stories:latest"}]}`)
		case strings.Contains(string(body), `"stream":false`):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":"{\"title\":\"soak\",\"items\":[1,2,3]}","done":true,"done_reason":"stop","eval_count":12}`)
		default:
			w.Header().Set("Content-Type", "application/x-ndjson")
			for i := range 20 {
				fmt.Fprintf(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":" w%d","done":false}`+"\n", i)
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":"","done":true,"done_reason":"stop"}`+"\n")
		}
	})
	go (&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
	return "http://" + ln.Addr().String()
}

func buildGateway() (string, func()) {
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		log.Fatal(err)
	}
	bin := filepath.Join(dir, "gateway")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/gateway")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("build: %v", err)
	}
	return bin, func() { os.RemoveAll(dir) }
}

func startGateway(bin, upstream string) (string, int, func()) {
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--upstream", upstream)
	// The request log is off: at tens of thousands of requests a second
	// it would measure the terminal.
	cmd.Env = append(os.Environ(), "GATEWAY_LOG_LEVEL=warn")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return a, cmd.Process.Pid, func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		log.Fatal("the gateway did not start")
	}
	return "", 0, nil
}

func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return -1
}

var (
	goroutinesRE = regexp.MustCompile(`(?m)^go_goroutines (\S+)`)
	heapRE       = regexp.MustCompile(`(?m)^go_memstats_heap_inuse_bytes (\S+)`)
)

// runtimeFigures reads the gateway's goroutines and heap in use from its
// /metrics (the scrape itself costs a goroutine).
func runtimeFigures(gw string) (int, float64) {
	resp, err := http.Get(gw + "/metrics")
	if err != nil {
		return -1, -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	num := func(re *regexp.Regexp) float64 {
		m := re.FindSubmatch(b)
		if m == nil {
			return -1
		}
		f, _ := strconv.ParseFloat(string(m[1]), 64)
		return f
	}
	return int(num(goroutinesRE)), num(heapRE)
}

func pct(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i]) / float64(time.Millisecond)
}
