// Command proxy measures what the gateway adds to pass-through requests,
// side by side with a bare httputil.ReverseProxy, in one run on loopback.
//
// It starts three processes on 127.0.0.1: a fake Ollama upstream and a bare
// reverse proxy (both this program, re-executed with -role), and the
// gateway binary given with -gateway. Then it measures, for each of
// direct upstream, bare proxy and gateway:
//
//   - latency percentiles with hey (-n requests, -c concurrency), for a
//     small JSON answer (GET /api/tags) and a 20-chunk NDJSON stream
//     (POST /api/generate, stream true): -rounds runs per target, the
//     targets in turn and in a rotating order, so that a change in the
//     machine's load falls on all three alike; the table holds the
//     medians, and the p50 ratio of each round follows it;
//   - latency of one request at a time, and time to the first streamed
//     byte (httptrace GotFirstResponseByte), with a Go client, -seq
//     requests each;
//   - the resident memory (VmRSS) of the gateway and the bare proxy with
//     -idle pass-through streams held open.
//
// It prints the added latency over the direct upstream and the ratios
// gateway/bare. Run it through bench/proxy/run.sh, which builds both
// binaries and installs hey when missing.
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
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/contractgateway/gateway/internal/benchload"
	"github.com/contractgateway/gateway/internal/benchupstream"
)

func main() {
	var (
		role     = flag.String("role", "bench", "bench, or (internal) upstream or bare")
		upstream = flag.String("upstream", "", "upstream URL (role bare)")
		gateway  = flag.String("gateway", "", "gateway binary (role bench)")
		hey      = flag.String("hey", "hey", "hey binary")
		n        = flag.Int("n", 20000, "requests per hey run")
		c        = flag.Int("c", 20, "hey concurrency")
		rounds   = flag.Int("rounds", 5, "hey runs per target and scenario, the targets in turn; the medians are printed")
		seq      = flag.Int("seq", 500, "sequential requests per target for single-request latency and time to first byte")
		idle     = flag.Int("idle", 1000, "idle pass-through streams held open for the memory figure")
		limit    = flag.Duration("timeout", 10*time.Minute, "bound on the whole run")
		logLevel = flag.String("log-level", "info", "the gateway's log level (info logs one line per request, as in production)")
	)
	flag.Parse()
	log.SetFlags(0)
	switch *role {
	case "upstream":
		serve(benchupstream.Upstream())
	case "bare":
		u, err := url.Parse(*upstream)
		if err != nil || u.Host == "" {
			log.Fatalf("-upstream %q: want a URL", *upstream)
		}
		serve(benchupstream.BareProxy(u))
	case "bench":
		if *gateway == "" {
			log.Fatal("-gateway BIN is required")
		}
		ctx, cancel := context.WithTimeout(context.Background(), *limit)
		defer cancel()
		b := &bench{gatewayBin: *gateway, hey: *hey, n: *n, c: *c, rounds: max(*rounds, 1), seq: *seq, idle: *idle, logLevel: *logLevel}
		err := b.run(ctx)
		b.stop()
		if err != nil {
			log.Fatal(err)
		}
	default:
		log.Fatalf("unknown -role %q", *role)
	}
}

// serve listens on a free loopback port, prints "listening on http://ADDR"
// and serves h until killed.
func serve(h http.Handler) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal((&http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}).Serve(ln))
}

type bench struct {
	gatewayBin, hey string
	n, c, seq, idle int
	rounds          int
	logLevel        string

	procs []*exec.Cmd
	// targets in print order: direct upstream, bare proxy, gateway.
	direct, bare, gateway target
}

type target struct {
	name string
	url  string
	pid  int
}

func (b *bench) run(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if b.direct.url, b.direct.pid, err = b.start(ctx, "upstream", exec.Command(self, "-role", "upstream"), false); err != nil {
		return err
	}
	b.direct.name = "direct"
	if b.bare.url, b.bare.pid, err = b.start(ctx, "bare proxy", exec.Command(self, "-role", "bare", "-upstream", b.direct.url), false); err != nil {
		return err
	}
	b.bare.name = "bare"
	// The bare proxy bounds no upstream connections; nor does the gateway
	// here, so that the idle-stream step holds all of its streams open at
	// once instead of queueing those beyond upstream_max_conns (256).
	conf := filepath.Join(os.TempDir(), fmt.Sprintf("bench-proxy-%d.yaml", os.Getpid()))
	if err := os.WriteFile(conf, []byte("upstream_max_conns: -1\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(conf)
	gw := exec.Command(b.gatewayBin, "serve", "--listen", "127.0.0.1:0", "--upstream", b.direct.url, "--config", conf)
	gw.Env = append(gatewayEnv(), "GATEWAY_LOG_LEVEL="+b.logLevel)
	if b.gateway.url, b.gateway.pid, err = b.start(ctx, "gateway", gw, true); err != nil {
		return err
	}
	b.gateway.name = "gateway"
	targets := []target{b.direct, b.bare, b.gateway}

	fmt.Printf("Pass-through benchmark, loopback only. %d CPUs, load average %s; hey -n %d -c %d; %d sequential requests per target.\n", runtime.NumCPU(), loadAvg(), b.n, b.c, b.seq)
	fmt.Printf("upstream %s  bare %s  gateway %s (%s, log level %s)\n\n", b.direct.url, b.bare.url, b.gateway.url, b.gatewayBin, b.logLevel)

	rssStart := map[string]int{}
	for _, t := range targets[1:] {
		rssStart[t.name] = benchload.RSS(t.pid)
	}

	// Warm up connection pools and the runtime.
	for _, t := range targets {
		if _, err := b.heyRun(ctx, t, nonStream, 2000); err != nil {
			return err
		}
	}

	for _, sc := range []scenario{nonStream, stream} {
		fmt.Printf("== %s (%s %s), hey -n %d -c %d, %d rounds: median latency in ms\n", sc.name, sc.method, sc.path, b.n, b.c, b.rounds)
		runs := map[string][]heyResult{}
		var byRound []string
		for r := range b.rounds {
			for i := range targets {
				t := targets[(i+r)%len(targets)]
				res, err := b.heyRun(ctx, t, sc, b.n)
				if err != nil {
					return err
				}
				runs[t.name] = append(runs[t.name], res)
			}
			byRound = append(byRound, ratio(runs["gateway"][r].pct["p50"], runs["bare"][r].pct["p50"]))
		}
		res := map[string]heyResult{}
		for name, rs := range runs {
			res[name] = medianResult(rs)
		}
		printPercentiles(res, []string{"p50", "p90", "p99"}, func(r heyResult, p string) float64 { return r.pct[p] },
			func(r heyResult) string { return fmt.Sprintf("%8.0f req/s  %s", r.rps, r.statuses) })
		fmt.Printf("p50 ratio gateway/bare by round: %s\n\n", strings.Join(byRound, " "))
	}

	fmt.Printf("== one request at a time (Go client, %d requests each): latency in ms\n", b.seq)
	for _, sc := range []scenario{nonStream, stream} {
		fmt.Printf("-- %s, whole response\n", sc.name)
		res, err := sequentialEach(ctx, targets, sc, b.seq)
		if err != nil {
			return err
		}
		printSeq(res, func(r seqResult) []time.Duration { return r.total })
	}
	fmt.Printf("-- stream, time to first byte (httptrace GotFirstResponseByte)\n")
	res, err := sequentialEach(ctx, targets, stream, b.seq)
	if err != nil {
		return err
	}
	printSeq(res, func(r seqResult) []time.Duration { return r.ttfb })
	fmt.Println()

	fmt.Printf("== memory: VmRSS with %d idle pass-through streams (POST /api/pull held open by the upstream)\n", b.idle)
	fmt.Printf("%-8s %12s %14s %18s %14s\n", "", "at start", "after load", "with streams", "per stream")
	var perStream = map[string]float64{}
	var gwMem string
	for _, t := range targets[1:] {
		after := benchload.RSS(t.pid)
		held, err := holdStreams(ctx, t, b.idle)
		if err != nil {
			return err
		}
		with := benchload.RSS(t.pid)
		if t.name == "gateway" {
			gwMem = goMemory(ctx, t.url)
		}
		held.close()
		perStream[t.name] = float64(with-after) / float64(b.idle)
		fmt.Printf("%-8s %9.1f MiB %11.1f MiB %15.1f MiB %11.1f KiB\n", t.name,
			kib(rssStart[t.name]), kib(after), kib(with), perStream[t.name])
	}
	if perStream["bare"] > 0 {
		fmt.Printf("ratio gateway/bare, memory per stream: %.2f\n", perStream["gateway"]/perStream["bare"])
	}
	fmt.Printf("gateway with the streams open, from its /metrics: %s\n", gwMem)
	fmt.Printf("\nload average at the end: %s (other processes on this machine skew the figures)\n", loadAvg())
	return nil
}

// goMemory summarises the Go runtime's memory from the gateway's /metrics.
func goMemory(ctx context.Context, base string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	val := func(name string) float64 {
		m := regexp.MustCompile(`(?m)^` + name + ` ([0-9.e+]+)$`).FindSubmatch(b)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	return fmt.Sprintf("%.0f goroutines, stacks %.1f MiB, heap in use %.1f MiB",
		val("go_goroutines"), val("go_memstats_stack_inuse_bytes")/(1<<20), val("go_memstats_heap_inuse_bytes")/(1<<20))
}

// loadAvg is the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func kib(k int) float64 { return float64(k) / 1024 }

// gatewayEnv is the environment without GATEWAY_* settings that would
// change what is measured.
func gatewayEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEWAY_") {
			env = append(env, kv)
		}
	}
	return env
}

// start runs cmd, waits for its "listening on URL" line (on stderr for the
// gateway, stdout otherwise) and drains the rest of its output.
func (b *bench) start(ctx context.Context, name string, cmd *exec.Cmd, stderr bool) (string, int, error) {
	var out io.ReadCloser
	var err error
	if stderr {
		cmd.Stdout = io.Discard
		out, err = cmd.StderrPipe()
	} else {
		cmd.Stderr = os.Stderr
		out, err = cmd.StdoutPipe()
	}
	if err != nil {
		return "", 0, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, fmt.Errorf("start %s: %w", name, err)
	}
	b.procs = append(b.procs, cmd)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok && !sent {
				found <- u
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			return "", 0, fmt.Errorf("%s exited before listening", name)
		}
		return u, cmd.Process.Pid, nil
	case <-time.After(30 * time.Second):
		return "", 0, fmt.Errorf("%s did not print its address within 30s", name)
	case <-ctx.Done():
		return "", 0, ctx.Err()
	}
}

// stop ends the processes this program started, each by its own pid.
func (b *bench) stop() {
	for _, p := range b.procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range b.procs {
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			p.Process.Kill()
			<-done
		}
	}
}

type scenario struct {
	name, method, path, body string
}

var (
	nonStream = scenario{"non-stream", http.MethodGet, "/api/tags", ""}
	stream    = scenario{"stream", http.MethodPost, "/api/generate", `{"model":"stories","prompt":"Once upon a time","stream":true}`}
)

type heyResult struct {
	pct      map[string]float64 // milliseconds
	rps      float64
	statuses string
}

var (
	heyPct    = regexp.MustCompile(`(?m)^\s+(\d+)% in ([0-9.]+) secs`)
	heyRPS    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	heyStatus = regexp.MustCompile(`(?m)^\s+\[(\d+)\]\s+(\d+) responses`)
)

// heyRun runs hey against t and parses its summary.
func (b *bench) heyRun(ctx context.Context, t target, sc scenario, n int) (heyResult, error) {
	args := []string{"-n", strconv.Itoa(n), "-c", strconv.Itoa(b.c), "-m", sc.method}
	if sc.body != "" {
		args = append(args, "-T", "application/json", "-d", sc.body)
	}
	args = append(args, t.url+sc.path)
	out, err := exec.CommandContext(ctx, b.hey, args...).CombinedOutput()
	if err != nil {
		return heyResult{}, fmt.Errorf("hey %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	r := heyResult{pct: map[string]float64{}}
	for _, m := range heyPct.FindAllStringSubmatch(string(out), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		r.pct["p"+m[1]] = v * 1000
	}
	if m := heyRPS.FindStringSubmatch(string(out)); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	var st []string
	ok := 0
	for _, m := range heyStatus.FindAllStringSubmatch(string(out), -1) {
		st = append(st, m[1]+"×"+m[2])
		if m[1] == "200" {
			ok, _ = strconv.Atoi(m[2])
		}
	}
	if ok != n {
		// A bare ReverseProxy cuts some streams whose request had a body
		// (golang/go#40747); hey counts them as errors.
		st = append(st, fmt.Sprintf("errors×%d", n-ok))
	}
	r.statuses = strings.Join(st, " ")
	if ok < n/2 {
		return r, fmt.Errorf("hey against %s %s: %d of %d answered 200:\n%s", t.name, sc.path, ok, n, out)
	}
	return r, nil
}

// medianResult is the median of each percentile and of the throughput
// over the runs, with the statuses of every run that differs from the
// first.
func medianResult(rs []heyResult) heyResult {
	median := func(get func(heyResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	out := heyResult{pct: map[string]float64{}, statuses: rs[0].statuses}
	for p := range rs[0].pct {
		out.pct[p] = median(func(r heyResult) float64 { return r.pct[p] })
	}
	out.rps = median(func(r heyResult) float64 { return r.rps })
	for _, r := range rs[1:] {
		if r.statuses != rs[0].statuses {
			out.statuses += " | " + r.statuses
		}
	}
	return out
}

func printPercentiles(res map[string]heyResult, ps []string, get func(heyResult, string) float64, extra func(heyResult) string) {
	fmt.Printf("%-8s", "")
	for _, p := range ps {
		fmt.Printf(" %9s", p)
	}
	fmt.Printf("   %s\n", "throughput, statuses")
	for _, name := range []string{"direct", "bare", "gateway"} {
		fmt.Printf("%-8s", name)
		for _, p := range ps {
			fmt.Printf(" %9.2f", get(res[name], p))
		}
		fmt.Printf("   %s\n", extra(res[name]))
	}
	for _, name := range []string{"bare", "gateway"} {
		fmt.Printf("%-8s", "+"+name)
		for _, p := range ps {
			fmt.Printf(" %9.2f", get(res[name], p)-get(res["direct"], p))
		}
		fmt.Printf("   added over direct\n")
	}
	fmt.Printf("%-8s", "ratio")
	for _, p := range ps {
		fmt.Printf(" %9.2f", get(res["gateway"], p)/get(res["bare"], p))
	}
	fmt.Printf("   gateway/bare, latency\n")
	fmt.Printf("%-8s", "ratio+")
	for _, p := range ps {
		fmt.Printf(" %9s", ratio(get(res["gateway"], p)-get(res["direct"], p), get(res["bare"], p)-get(res["direct"], p)))
	}
	fmt.Printf("   gateway/bare, added latency\n")
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64)
}

type seqResult struct {
	total, ttfb []time.Duration
	cut         int // responses cut short
}

// sequential sends n requests one at a time and records each one's total
// time and time to its first response byte.
// sequentialEach runs sequential against each target in turn and returns
// their results by target name.
func sequentialEach(ctx context.Context, targets []target, sc scenario, n int) (map[string]seqResult, error) {
	res := map[string]seqResult{}
	for _, t := range targets {
		r, err := sequential(ctx, t, sc, n)
		if err != nil {
			return nil, err
		}
		res[t.name] = r
	}
	return res, nil
}

func sequential(ctx context.Context, t target, sc scenario, n int) (seqResult, error) {
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	var r seqResult
	for i := 0; i < n+50; i++ { // the first 50 warm up
		var first time.Time
		trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Now() }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), sc.method, t.url+sc.path, strings.NewReader(sc.body))
		if err != nil {
			return r, err
		}
		if sc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return r, fmt.Errorf("%s %s: %w", t.name, sc.path, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		end := time.Now()
		if resp.StatusCode != http.StatusOK {
			return r, fmt.Errorf("%s %s: status %d", t.name, sc.path, resp.StatusCode)
		}
		if err != nil {
			r.cut++ // a stream cut short: not a latency sample
			continue
		}
		if i >= 50 {
			r.total = append(r.total, end.Sub(start))
			r.ttfb = append(r.ttfb, first.Sub(start))
		}
	}
	return r, nil
}

func printSeq(res map[string]seqResult, get func(seqResult) []time.Duration) {
	ps := []float64{50, 90, 99}
	fmt.Printf("%-8s %9s %9s %9s\n", "", "p50", "p90", "p99")
	val := func(name string, p float64) float64 { return benchload.Percentile(get(res[name]), p) }
	for _, name := range []string{"direct", "bare", "gateway"} {
		fmt.Printf("%-8s", name)
		for _, p := range ps {
			fmt.Printf(" %9.3f", val(name, p))
		}
		if c := res[name].cut; c > 0 {
			fmt.Printf("   %d responses cut short (not counted)", c)
		}
		fmt.Println()
	}
	for _, name := range []string{"bare", "gateway"} {
		fmt.Printf("%-8s", "+"+name)
		for _, p := range ps {
			fmt.Printf(" %9.3f", val(name, p)-val("direct", p))
		}
		fmt.Printf("   added over direct\n")
	}
	fmt.Printf("%-8s", "ratio")
	for _, p := range ps {
		fmt.Printf(" %9.2f", val("gateway", p)/val("bare", p))
	}
	fmt.Printf("   gateway/bare\n")
	fmt.Printf("%-8s", "ratio+")
	for _, p := range ps {
		fmt.Printf(" %9s", ratio(val("gateway", p)-val("direct", p), val("bare", p)-val("direct", p)))
	}
	fmt.Printf("   gateway/bare, added latency\n")
}

// heldStreams are open streams whose first line has arrived.
type heldStreams struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	client *http.Client
}

func (h *heldStreams) close() {
	h.cancel()
	h.wg.Wait()
	h.client.CloseIdleConnections()
}

// holdStreams opens n streams through t and returns once every one has
// delivered its first line, so that the proxy holds n live streams.
func holdStreams(ctx context.Context, t target, n int) (*heldStreams, error) {
	ctx, cancel := context.WithCancel(ctx)
	h := &heldStreams{cancel: cancel, client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	ready := make(chan error, n)
	for range n {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, t.url+"/api/pull", strings.NewReader(`{"model":"stories"}`))
			resp, err := h.client.Do(req)
			if err != nil {
				ready <- err
				return
			}
			defer resp.Body.Close()
			_, err = bufio.NewReader(resp.Body).ReadString('\n')
			ready <- err
			<-ctx.Done()
		}()
	}
	deadline := time.After(60 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case err := <-ready:
			if err != nil {
				h.close()
				return nil, fmt.Errorf("opening stream %d through %s: %w", i, t.name, err)
			}
		case <-deadline:
			h.close()
			return nil, errors.New("streams not open after 60s")
		}
	}
	time.Sleep(500 * time.Millisecond) // let the proxy's per-stream state settle
	return h, nil
}
