//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/internal/pgtest"
)

// topoPGOutage is how long the PostgreSQL scenario keeps the database
// down under load: 60s, or CG_TOPOLOGY_PG_OUTAGE (a Go duration, "20s")
// for a quicker run by hand.
var topoPGOutage = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CG_TOPOLOGY_PG_OUTAGE")); err == nil && d > 0 {
		return d
	}
	return 60 * time.Second
}()

// loadSample is one client request of a topoLoad: when it ran, what it
// asked and what the client saw.
type loadSample struct {
	id              string
	start, end      time.Time
	guarded, stream bool
	// failed says why the answer is not what was asked ("" when it is).
	failed string
	// readable is set on a failure the client can read as one: an error
	// status with an {"error": …} body, or a stream that ends in an error
	// event.
	readable bool
	// saw is what the client got, short, for the closing figures.
	saw string
}

// topoLoad sends guarded and pass-through requests, streamed and not, in
// turn, from a few workers through the balancer, until stopped.
type topoLoad struct {
	client *http.Client
	base   string
	prefix string
	ctx    context.Context
	cancel context.CancelFunc
	stop   chan struct{}
	wg     sync.WaitGroup
	next   atomic.Int64
	done   atomic.Int64

	mu      sync.Mutex
	samples []loadSample
}

// startLoad starts workers sending requests whose ids (and prompts)
// begin with prefix, so that no two scenarios share a cache entry or an
// outcome id; the load ends by itself after bound.
func startLoad(client *http.Client, base, prefix string, workers int, bound time.Duration) *topoLoad {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	l := &topoLoad{client: client, base: base, prefix: prefix, ctx: ctx, cancel: cancel, stop: make(chan struct{})}
	for range workers {
		l.wg.Go(l.work)
	}
	return l
}

func (l *topoLoad) work() {
	for {
		select {
		case <-l.stop:
			return
		case <-l.ctx.Done():
			return
		default:
		}
		n := l.next.Add(1)
		kind := n % 4
		s := loadSample{id: fmt.Sprintf("%s%d", l.prefix, n), guarded: kind < 2, stream: kind%2 == 1}
		var body string
		if s.guarded {
			body = topoRequest(fmt.Sprintf("Describe person %s%d", l.prefix, n), s.stream, topoSchema)
		} else {
			body = topoRequest(fmt.Sprintf("Once upon a time, story %s%d", l.prefix, n), s.stream, nil)
		}
		s.start = time.Now()
		status, b, _, err := topoDo(l.client, http.MethodPost, l.base+"/api/generate", topoLoadKey, s.id, body)
		s.end = time.Now()
		s.failed, s.readable, s.saw = judgeAnswer(status, b, err, s.guarded, s.stream)
		l.mu.Lock()
		l.samples = append(l.samples, s)
		l.mu.Unlock()
		l.done.Add(1)
	}
}

// waitCompleted waits until n requests of the load have completed.
func (l *topoLoad) waitCompleted(t *testing.T, what string, n int64) {
	t.Helper()
	waitFor(t, what, 60*time.Second, func() bool { return l.done.Load() >= n || l.ctx.Err() != nil })
	if l.ctx.Err() != nil {
		t.Fatalf("%s: the load ran out of its time bound", what)
	}
}

// finish stops the workers, waits for their last requests and returns
// every sample.
func (l *topoLoad) finish(t *testing.T) []loadSample {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	defer l.cancel()
	if l.ctx.Err() != nil {
		t.Fatalf("the load did not finish within its bound: %v", l.ctx.Err())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.samples)
}

// judgeAnswer reads what a client got for one request: why it is not the
// answer asked for ("" when it is: a 200, a stream ending in done, and for
// a guarded request an object the schema allows), whether such a failure
// is one the client can read as a failure, and a short description.
func judgeAnswer(status int, body []byte, err error, guarded, stream bool) (failed string, readable bool, saw string) {
	switch {
	case err != nil && status == 0:
		return err.Error(), false, "no answer: " + clipError(err.Error())
	case err != nil:
		if msg := streamError(body); msg != "" {
			return "stream error: " + msg, true, fmt.Sprintf("%d, stream error event %q", status, clipError(msg))
		}
		return fmt.Sprintf("status %d, then the body broke: %v", status, err), false,
			fmt.Sprintf("%d, then the connection broke (%s)", status, clipError(err.Error()))
	case status != http.StatusOK:
		var e struct {
			Error string `json:"error"`
		}
		readable = json.Unmarshal(body, &e) == nil && e.Error != ""
		return fmt.Sprintf("status %d: %.200s", status, body), readable, fmt.Sprintf("%d %s", status, clipError(strings.TrimSpace(string(body))))
	}
	text, err := answerText(body, stream)
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "stream error: "):
		msg := strings.TrimPrefix(err.Error(), "stream error: ")
		return err.Error(), true, fmt.Sprintf("200, stream error event %q", clipError(msg))
	case err != nil:
		return err.Error(), false, "200, " + clipError(err.Error())
	case guarded && !validPerson(text):
		return fmt.Sprintf("guarded answer %q is not a valid person", text), false, "200 with an invalid guarded answer"
	}
	return "", false, "200"
}

// streamError returns the error of the first NDJSON line of body that
// carries one ("" when none does).
func streamError(body []byte) string {
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct{ Error string }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Error != "" {
			return m.Error
		}
	}
	return ""
}

// clipError shortens a message for a figure line.
func clipError(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// tally counts descriptions, most frequent first: "200 ×12, 502 … ×2".
func tally(saw []string) string {
	counts := map[string]int{}
	for _, s := range saw {
		counts[s]++
	}
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int {
		if c := counts[b] - counts[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, counts[k])
	}
	return strings.Join(parts, "; ")
}

// ollamaKilled holds a load through the balancer, SIGKILLs one of the two
// Ollamas while it streams a pass-through answer (and takes its counting proxy down with it, so that the
// gateways meet what a dead host gives: connections cut, new ones
// refused) and checks that every request sent after its death is answered
// by the other, and that no guarded request got a silent pass: a guarded
// answer is valid or an error the client can read as one.
func ollamaKilled(t *testing.T, client *http.Client, base string, victim *ollamatest.Server, proxy *countingProxy) {
	const (
		workers = 6
		before  = 30 // requests completed before the kill
		after   = 80 // requests completed after it
	)
	l := startLoad(client, base, "topo-kill-", workers, 120*time.Second)
	l.waitCompleted(t, "load before the kill", before)
	// The kill comes the moment a pass-through stream on the victim has
	// sent its first chunk: a started stream is cut, which the pool
	// never replays.
	streaming := make(chan struct{}, 1)
	proxy.streaming.Store(&streaming)
	select {
	case <-streaming:
	case <-time.After(30 * time.Second):
		t.Fatal("no pass-through stream began on the Ollama to kill within 30s")
	}
	killBegin := time.Now()
	cut := proxy.inflight.Load()
	victim.Kill()
	proxy.srv.Listener.Close()
	proxy.srv.CloseClientConnections()
	killed := time.Now()
	l.waitCompleted(t, "load after the kill", l.done.Load()+after)
	samples := l.finish(t)

	var inFlight, afterKill, failed, failedInFlight, failedAfter, guarded int
	var sawInFlight []string
	for _, s := range samples {
		if s.guarded {
			guarded++
		}
		if s.failed != "" {
			failed++
		}
		if s.guarded && s.failed != "" && !s.readable {
			t.Errorf("guarded request %s (stream %v): the client saw %s (%s), want a valid answer or an error it can read", s.id, s.stream, s.saw, s.failed)
		}
		switch {
		case s.end.Before(killBegin):
		case !s.start.Before(killed):
			afterKill++
			if s.failed != "" {
				failedAfter++
				t.Errorf("request %s (guarded %v, stream %v) sent after the kill failed: %s", s.id, s.guarded, s.stream, s.failed)
			}
		default:
			inFlight++
			kind := "pass-through"
			if s.guarded {
				kind = "guarded"
			}
			if s.stream {
				kind += " stream"
			}
			sawInFlight = append(sawInFlight, kind+": "+s.saw)
			if s.failed != "" {
				failedInFlight++
			}
		}
	}
	t.Logf("Ollama killed mid-load: %d requests sent (%d guarded), %d failed (%.1f%%); %d in flight at the kill (%d generations in progress or queued on the killed Ollama), %d of them failed; %d sent after the kill, %d of them failed",
		len(samples), guarded, failed, percent(failed, len(samples)), inFlight, cut, failedInFlight, afterKill, failedAfter)
	t.Logf("Ollama killed mid-load: what the clients in flight saw: %s", tally(sawInFlight))
}

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// pgOutage holds a load through the balancer while PostgreSQL is stopped
// for topoPGOutage and started again: no client request may fail, and
// once the database is back every guarded answer has its outcome record
// (the gateways spooled them meanwhile). The spool's size is sampled
// from every replica's /metrics during the outage.
func pgOutage(t *testing.T, client *http.Client, base string, replicas []*replica, pg *pgtest.Server) {
	const (
		workers = 4
		before  = 20 // requests completed before the outage, and after it
	)
	l := startLoad(client, base, "topo-pg-", workers, topoPGOutage+120*time.Second)
	l.waitCompleted(t, "load before the outage", before)
	pg.Stop()
	outageBegin := time.Now()
	peak := map[string]float64{} // per replica
	var peakSum, peakRecords float64
	tick := time.NewTicker(250 * time.Millisecond)
	for time.Since(outageBegin) < topoPGOutage {
		<-tick.C
		var sum, records float64
		for _, r := range replicas {
			m := replicaMetrics(client, r)
			peak[r.name] = max(peak[r.name], m["gateway_outcomes_spool_bytes"])
			sum += m["gateway_outcomes_spool_bytes"]
			records += m["gateway_outcomes_spool_records"]
		}
		peakSum, peakRecords = max(peakSum, sum), max(peakRecords, records)
	}
	tick.Stop()
	pg.Restart(t)
	outage := time.Since(outageBegin)
	l.waitCompleted(t, "load after the outage", l.done.Load()+before)
	samples := l.finish(t)

	var answered []string
	failed := 0
	for _, s := range samples {
		if s.failed != "" {
			failed++
			if failed <= 5 {
				t.Errorf("request %s (guarded %v, stream %v) failed: %s", s.id, s.guarded, s.stream, s.failed)
			}
		}
		if s.guarded && s.failed == "" {
			answered = append(answered, s.id)
		}
	}
	if failed != 0 {
		t.Errorf("%d of %d client requests failed, want 0", failed, len(samples))
	}

	conn, err := pgx.Connect(context.Background(), pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var records int
	back := time.Now()
	count := func() bool {
		err := conn.QueryRow(context.Background(), `SELECT count(DISTINCT id) FROM outcomes WHERE id LIKE 'topo-pg-%'`).Scan(&records)
		return err == nil && records >= len(answered)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !count() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	replayed := time.Since(back)
	var left float64
	for _, r := range replicas {
		left += replicaMetrics(client, r)["gateway_outcomes_spool_bytes"]
	}
	perReplica := make([]string, len(replicas))
	for i, r := range replicas {
		perReplica[i] = fmt.Sprintf("%s %.0f B", r.name, peak[r.name])
	}
	t.Logf("PostgreSQL stopped for %v under load: %d requests sent, %d failed; %d guarded answered, %d outcome records written (all within %v of its return); spool peak %.0f bytes in all (%s), %.0f records; spool after the replay %.0f bytes",
		outage.Round(time.Millisecond), len(samples), failed, len(answered), records, replayed.Round(time.Millisecond),
		peakSum, strings.Join(perReplica, ", "), peakRecords, left)
	if records != len(answered) {
		t.Errorf("outcome records = %d, want %d (one per guarded request answered)", records, len(answered))
	}
	if peakSum == 0 {
		t.Errorf("the spool stayed empty during the outage: the records were not spooled")
	}
}

// replicaMetrics reads a replica's /metrics: the value of each series
// without labels (nil when it does not answer).
func replicaMetrics(client *http.Client, r *replica) map[string]float64 {
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+topoAdminToken)
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			m[name] = v
		}
	}
	return m
}

// replicaMemory is what a replica's process held at one moment.
type replicaMemory struct {
	pid       int
	rss, heap float64 // bytes: VmRSS, and the Go heap in use
}

// sampleMemory reads each replica's VmRSS from /proc and its Go heap
// from /metrics.
func sampleMemory(t *testing.T, client *http.Client, replicas []*replica) []replicaMemory {
	out := make([]replicaMemory, len(replicas))
	for i, r := range replicas {
		pid := r.cmd.Process.Pid
		out[i].pid = pid
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for line := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
					kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
					out[i].rss = kb * 1024
				}
			}
		} else {
			t.Logf("%s: %v", r.name, err)
		}
		out[i].heap = replicaMetrics(client, r)["go_memstats_heap_inuse_bytes"]
	}
	return out
}

// logMemory logs one line per replica: its memory before and after.
func logMemory(t *testing.T, replicas []*replica, before, after []replicaMemory, when string) {
	for i, r := range replicas {
		pid := fmt.Sprintf("pid %d", after[i].pid)
		if before[i].pid != after[i].pid {
			pid = fmt.Sprintf("pid %d, then %d", before[i].pid, after[i].pid)
		}
		t.Logf("memory of %s (%s) %s: RSS %s before, %s after; Go heap in use %s before, %s after",
			r.name, pid, when, mib(before[i].rss), mib(after[i].rss), mib(before[i].heap), mib(after[i].heap))
	}
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
