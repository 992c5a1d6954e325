// Command soak holds N connections of mixed traffic against the gateway
// for D, once with the outcome store off and once with it on (SQLite in a
// temp dir), one gateway after the other, and prints throughput, latency
// and errors side by side with their ratios, the outcome Writer's
// counters (records written, dropped by a full queue, failed), and each
// gateway's memory and goroutines before, during and after. Each gateway
// runs as its own process (built from this checkout) so that its RSS is
// its own; the fake Ollama runs in this process and answers at once.
// Loopback only; every loop is bounded by D.
//
//	make soak                       # N=1000, D=60s
//	go run ./bench/soak -n 200 -d 20s
//	go run ./bench/soak -n 1000 -d 30s -rounds 2 -idle 0   # off, on, off, on
//	go run ./bench/soak -n 1000 -d 30s -idle 0 -profile /tmp/prof
//	go run ./bench/soak -n 1000 -d 30s -rounds 4 -idle 0 -paired
//
// Beside wall-clock figures it prints the gateway process's CPU time per
// request (user and system, from /proc), and each round's ratios: on a
// machine that other work shares, throughput and p99 move with that
// work, the CPU a request costs less so. With -paired both gateways take
// their load at the same time, each from its own n connections, so that
// a busy machine slows both alike and their ratio shows the store's cost
// rather than the other work's drift (each gets about half the CPU: the
// figures are not those of one gateway alone). With -profile the gateway
// is built with net/http/pprof on a second loopback listener (a file added to the build by an overlay, so
// the gateway's own code has no such listener) and each run's CPU profile
// over its load and its allocation profile after it are saved in the
// directory, for go tool pprof.
package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
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

	"github.com/contractgateway/gateway/internal/benchload"
)

func main() {
	n := flag.Int("n", 1000, "connections")
	d := flag.Duration("d", 60*time.Second, "duration of the load, per gateway")
	idle := flag.Duration("idle", 5*time.Minute, "how long to sample the last gateway idle after its load")
	rounds := flag.Int("rounds", 1, "rounds of store off then on; more rounds average out a machine whose other load drifts")
	profile := flag.String("profile", "", "directory for each run's CPU and allocation profiles of the gateway; empty: none")
	paired := flag.Bool("paired", false, "load both gateways at once, each with n connections, so that they share the machine's other load alike")
	flag.Parse()
	log.SetFlags(0)

	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	up := startUpstream()
	bin, dir, cleanup := buildGateway(*profile != "")
	defer cleanup()
	// Off first: a store's file cache then cannot favour the run without
	// it.
	offCfg := filepath.Join(dir, "off.yaml")
	if err := os.WriteFile(offCfg, []byte("outcomes:\n  disabled: true\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	runs := []struct {
		name string
		env  []string
	}{
		{"store off", []string{"GATEWAY_CONFIG=" + offCfg}},
		{"store on", []string{"GATEWAY_OUTCOMES_SQLITE=" + filepath.Join(dir, "outcomes.db")}},
	}
	results := make([]result, len(runs))
	var roundRatios [][2]float64
	for round := range max(*rounds, 1) {
		this := make([]result, len(runs))
		// Paired, each load starts once both gateways are up and warm.
		var started sync.WaitGroup
		started.Add(len(runs))
		var wg sync.WaitGroup
		for i, r := range runs {
			idleFor := time.Duration(0)
			if round == *rounds-1 && i == len(runs)-1 {
				idleFor = *idle
			}
			var prof string
			if *profile != "" {
				prof = filepath.Join(*profile, fmt.Sprintf("%s-%d", strings.ReplaceAll(r.name, " ", "-"), round+1))
			}
			if !*paired {
				this[i] = soak(bin, up, r.name, r.env, *n, *d, idleFor, prof, func() {})
				continue
			}
			wg.Go(func() {
				this[i] = soak(bin, up, r.name, r.env, *n, *d, idleFor, prof, func() { started.Done(); started.Wait() })
			})
		}
		wg.Wait()
		// A round's ratios are taken before merging (merge appends to
		// the first round's maps).
		rps, cpu := this[1].rps()/this[0].rps(), float64(this[1].cpuPerRequest())/float64(this[0].cpuPerRequest())
		roundRatios = append(roundRatios, [2]float64{rps, cpu})
		fmt.Printf("round %d: store on/off rps ratio %.3f, gateway CPU per request ratio %.3f\n", round+1, rps, cpu)
		for i := range runs {
			results[i] = results[i].merge(this[i])
		}
	}
	report(results)
	if len(roundRatios) > 1 {
		med := func(k int) float64 {
			v := make([]float64, len(roundRatios))
			for i, r := range roundRatios {
				v[i] = r[k]
			}
			slices.Sort(v)
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		fmt.Printf("median of %d rounds: store on/off rps ratio %.3f, gateway CPU per request ratio %.3f\n", len(roundRatios), med(0), med(1))
	}
}

// merge adds o, another round of the same gateway, to r.
func (r result) merge(o result) result {
	if r.lat == nil {
		return o
	}
	for k, v := range o.lat {
		r.lat[k] = append(r.lat[k], v...)
	}
	for k, v := range o.errs {
		r.errs[k] += v
	}
	for k, v := range o.outcomes {
		r.outcomes[k] += v
	}
	r.elapsed += o.elapsed
	r.cpu += o.cpu
	return r
}

// result is what one gateway's load measured.
type result struct {
	name    string
	lat     map[string][]time.Duration
	errs    map[string]int
	elapsed time.Duration
	// cpu is the gateway process's user and system time over the load.
	cpu time.Duration
	// outcomes are the Writer's counters after the load, from /metrics.
	outcomes map[string]float64
}

func (r result) all() []time.Duration {
	var all []time.Duration
	for _, name := range names {
		all = append(all, r.lat[name]...)
	}
	return all
}

func (r result) rps() float64 { return float64(len(r.all())) / r.elapsed.Seconds() }

// cpuPerRequest is the gateway's CPU time per request answered.
func (r result) cpuPerRequest() time.Duration {
	if n := len(r.all()); n > 0 {
		return r.cpu / time.Duration(n)
	}
	return 0
}

// soak starts a gateway with env, holds n connections of mixed traffic
// against it for d, samples it idle for idle, and stops it. With prof set
// it saves the gateway's CPU profile over the load at prof.cpu.pprof and
// its allocations at prof.allocs.pprof. It calls begin once the gateway
// is up and warm, just before the load: paired runs wait there for each
// other.
func soak(bin, up, name string, env []string, n int, d, idle time.Duration, prof string, begin func()) result {
	gw, pprofURL, pid, stop := startGateway(bin, up, env, prof != "")
	defer stop()

	tr := &http.Transport{MaxIdleConns: n, MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	// A first guarded request fills the cache, so that later ones are a mix
	// of hits and whole guard runs.
	do(client, gw, 2)

	fmt.Printf("soak, %s: %d connections for %s against %s (gateway pid %d)\n", name, n, d, gw, pid)
	sample := func(when string) {
		g, heap := runtimeFigures(gw)
		fmt.Printf("%-9s rss %7.1f MiB  heap in use %7.1f MiB  goroutines %6d\n", when, float64(benchload.RSS(pid))/1024, heap/(1<<20), g)
	}
	sample("before")
	begin()

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	res := result{name: name, lat: map[string][]time.Duration{}, errs: map[string]int{}}
	var wg sync.WaitGroup
	profiled := make(chan struct{})
	go func() {
		defer close(profiled)
		if prof != "" {
			// The profile ends a second before the load does, so that it
			// holds load only.
			secs := max(int(d.Seconds())-1, 1)
			save(pprofURL+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), prof+".cpu.pprof")
		}
	}()
	cpu0 := cpuTime(pid)
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			for k := i; ctx.Err() == nil; k++ {
				kind := k % 4
				t0 := time.Now()
				err := do(client, gw, kind)
				el := time.Since(t0)
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						res.errs[err.Error()]++
					}
				} else {
					res.lat[names[kind]] = append(res.lat[names[kind]], el)
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
	res.elapsed = time.Since(start)
	res.cpu = cpuTime(pid) - cpu0
	<-profiled
	if prof != "" {
		save(pprofURL+"/debug/pprof/allocs", prof+".allocs.pprof")
	}
	tr.CloseIdleConnections()
	// The Writer writes a batch every second at the latest: what the load
	// queued is written (or counted as failed) once two have passed.
	time.Sleep(2 * time.Second)
	res.outcomes = outcomeCounters(gw)
	// Idle: the gateway's pooled upstream connections (two goroutines
	// each) close after the transport's 90 s idle timeout; an idle process
	// allocates too little to start a GC, so its heap shrinks at the
	// runtime's forced GCs (every two minutes; pooled buffers survive the
	// first) and its RSS as the scavenger hands pages back.
	for i := range int(idle / (10 * time.Second)) {
		time.Sleep(10 * time.Second)
		if (i+1)%3 == 0 {
			sample(fmt.Sprintf("idle+%ds", 10*(i+1)))
		}
	}
	return res
}

// report prints the runs side by side, with each run's ratio to the
// first.
func report(rs []result) {
	fmt.Println()
	head := fmt.Sprintf("%-24s", "traffic")
	for _, r := range rs {
		head += fmt.Sprintf(" %26s", r.name+": n, p50, p99 ms")
	}
	fmt.Println(head + "   p99 ratio")
	row := func(label string, get func(result) []time.Duration) {
		line := fmt.Sprintf("%-24s", label)
		for _, r := range rs {
			ls := get(r)
			line += fmt.Sprintf(" %8d %8.2f %8.2f", len(ls), benchload.Percentile(ls, 50), benchload.Percentile(ls, 99))
		}
		base, last := benchload.Percentile(get(rs[0]), 99), benchload.Percentile(get(rs[len(rs)-1]), 99)
		if base > 0 {
			line += fmt.Sprintf("   %9.3f", last/base)
		}
		fmt.Println(line)
	}
	for _, name := range names {
		row(name, func(r result) []time.Duration { return r.lat[name] })
	}
	row("all", result.all)
	for _, r := range rs {
		nerr := 0
		for _, c := range r.errs {
			nerr += c
		}
		fmt.Printf("%-10s rps %8.0f (ratio %.3f), gateway CPU %4.0f µs/request (ratio %.3f), errors %d, outcome records written %.0f, dropped %.0f, failed %.0f\n",
			r.name, r.rps(), r.rps()/rs[0].rps(), float64(r.cpuPerRequest())/float64(time.Microsecond),
			float64(r.cpuPerRequest())/float64(rs[0].cpuPerRequest()), nerr, r.outcomes["written"], r.outcomes["dropped"], r.outcomes["failed"])
		for e, c := range r.errs {
			fmt.Printf("  %6d  %s\n", c, e)
		}
	}
	fmt.Println("ratios are to the first run (store off); the target is within 5% (rps ratio >= 0.95, p99 ratio <= 1.05) and 0 dropped")
}

var outcomeRE = regexp.MustCompile(`(?m)^gateway_outcomes_(written|dropped|failed)_total (\S+)`)

// outcomeCounters reads the outcome Writer's counters from the gateway's
// /metrics; none when the store is off.
func outcomeCounters(gw string) map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get(gw + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, m := range outcomeRE.FindAllSubmatch(b, -1) {
		f, _ := strconv.ParseFloat(string(m[2]), 64)
		out[string(m[1])] = f
	}
	return out
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
		case strings.Contains(string(body), "json please"):
			// The guard asks for a stream whatever its client asked: the
			// document comes in pieces.
			w.Header().Set("Content-Type", "application/x-ndjson")
			for _, piece := range []string{`{\"title\":`, `\"soak\",`, `\"items\":[1,2,3]}`} {
				fmt.Fprintf(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":"%s","done":false}`+"\n", piece)
			}
			io.WriteString(w, `{"model":"stories","created_at":"2025-01-01T00:00:00Z","response":"","done":true,"done_reason":"stop","eval_count":12}`+"\n")
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

// pprofSource is added to the gateway's main package when profiling: it
// serves net/http/pprof on a loopback listener of its own.
//
//go:embed pprof.go.txt
var pprofSource []byte

// buildGateway builds the gateway of this checkout into a temp dir; with
// profile, with pprofSource added to its main package by an overlay.
func buildGateway(profile bool) (string, string, func()) {
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		log.Fatal(err)
	}
	bin := filepath.Join(dir, "gateway")
	args := []string{"build", "-o", bin}
	if profile {
		src, overlay := filepath.Join(dir, "pprof.go"), filepath.Join(dir, "overlay.json")
		target, err := filepath.Abs(filepath.Join("cmd", "gateway", "zz_soak_pprof.go"))
		if err != nil {
			log.Fatal(err)
		}
		spec, _ := json.Marshal(map[string]map[string]string{"Replace": {target: src}})
		if err := errors.Join(os.WriteFile(src, pprofSource, 0o600), os.WriteFile(overlay, spec, 0o600)); err != nil {
			log.Fatal(err)
		}
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, "./cmd/gateway")...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("build: %v", err)
	}
	return bin, dir, func() { os.RemoveAll(dir) }
}

// startGateway starts bin against upstream and returns its address, its
// pprof listener's (with profile), its pid and how to stop it.
func startGateway(bin, upstream string, env []string, profile bool) (string, string, int, func()) {
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--upstream", upstream)
	// The request log is off: at tens of thousands of requests a second
	// it would measure the terminal.
	cmd.Env = append(append(os.Environ(), "GATEWAY_LOG_LEVEL=warn"), env...)
	if profile {
		cmd.Env = append(cmd.Env, "CG_SOAK_PPROF=127.0.0.1:0")
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	addr, pprofAddr := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
			if a, ok := strings.CutPrefix(sc.Text(), "soak pprof on "); ok {
				pprofAddr <- "http://" + a
			}
		}
	}()
	timeout := time.After(30 * time.Second)
	var a, p string
	for a == "" || (profile && p == "") {
		select {
		case a = <-addr:
		case p = <-pprofAddr:
		case <-timeout:
			cmd.Process.Kill()
			log.Fatal("the gateway did not start")
		}
	}
	return a, p, cmd.Process.Pid, func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
}

// save writes what url answers to path.
func save(url, path string) {
	resp, err := http.Get(url)
	if err != nil {
		log.Printf("profile: %v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		log.Printf("profile: %v", err)
	}
}

// cpuTime is the user and system time process pid has used, from
// /proc/PID/stat (in clock ticks of 1/100 s, the USER_HZ of Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name in parentheses may hold spaces; the fields after
	// it are space-separated, utime and stime the 12th and 13th.
	_, after, ok := bytes.Cut(b, []byte(") "))
	f := strings.Fields(string(after))
	if !ok || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
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
