//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/internal/pgtest"
	"github.com/contractgateway/gateway/internal/redistest"
)

// The topology test's keys and token: the load key has no limit, the
// limited key topoLimit requests a minute.
const (
	topoAdminToken = "topo-admin"
	topoLoadKey    = "topo-load-key"
	topoLimitKey   = "topo-limited-key"
	topoLimit      = 5
	topoReplicas   = 3
)

// topoSchema is the ad-hoc schema of the guarded requests: small bounds,
// so that the tiny model's answer is short.
var topoSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":20},` +
	`"age":{"type":"integer","minimum":1,"maximum":120}},"required":["name","age"],"additionalProperties":false}`)

// countingProxy is a reverse proxy in front of one Ollama that counts its
// generations (POST /api/generate and /api/chat), not the pool's health
// checks, and those in progress.
type countingProxy struct {
	srv         *httptest.Server
	generations atomic.Int64
	inflight    atomic.Int64 // generations being answered now
	// streaming, when set, is sent to (without blocking) once the first
	// chunk of a pass-through stream has gone back to the gateway.
	streaming atomic.Pointer[chan struct{}]
	mu        sync.Mutex
	bodies    []string // the generations' bodies, for a failure message
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	// An Ollama that is gone cuts the connection, as it would without
	// the proxy, rather than answering 502.
	rp.ErrorHandler = func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) }
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (r.URL.Path == "/api/generate" || r.URL.Path == "/api/chat") {
			p.generations.Add(1)
			p.inflight.Add(1)
			defer p.inflight.Add(-1)
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			p.mu.Lock()
			p.bodies = append(p.bodies, string(b))
			p.mu.Unlock()
			if ch := p.streaming.Load(); ch != nil && passThroughStream(b) {
				w = &firstChunk{ResponseWriter: w, sent: func() {
					select {
					case *ch <- struct{}{}:
					default:
					}
				}}
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// passThroughStream reports whether a generation's body asks for a
// stream without a format: a pass-through stream of the load.
func passThroughStream(body []byte) bool {
	var m struct {
		Stream *bool
		Format json.RawMessage
	}
	return json.Unmarshal(body, &m) == nil && (m.Stream == nil || *m.Stream) && m.Format == nil
}

// firstChunk is a ResponseWriter that flushes every write and calls sent
// once, after the first.
type firstChunk struct {
	http.ResponseWriter
	once sync.Once
	sent func()
}

func (w *firstChunk) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	http.NewResponseController(w.ResponseWriter).Flush()
	w.once.Do(w.sent)
	return n, err
}

func (w *firstChunk) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *firstChunk) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// replica is one gateway process of the topology, started again on the
// same port after it exits.
type replica struct {
	name, addr, bin, config, state, log string
	cmd                                 *exec.Cmd
	done                                chan struct{}
}

// start runs the gateway binary and waits for its /readyz.
func (r *replica) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(r.bin, "serve", "--config", r.config)
	cmd.Env = append(os.Environ(), "GATEWAY_LISTEN="+r.addr, "XDG_STATE_HOME="+r.state, "GATEWAY_LOG_LEVEL=info")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	r.cmd, r.done = cmd, done
	waitFor(t, r.name+" ready", 30*time.Second, func() bool {
		select {
		case <-done:
			t.Fatalf("%s exited at start:\n%s", r.name, tail(r.log))
		default:
		}
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// terminate sends SIGTERM and waits for the process to exit.
func (r *replica) terminate(t *testing.T) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit within 30s of SIGTERM", r.name)
	}
}

// kill ends the process for good (cleanup).
func (r *replica) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Kill()
		<-r.done
	}
}

// waitFor polls cond every 50ms until it holds, failing t after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail returns the end of a log file for a failure message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freeAddr returns a loopback address with a port free at the moment.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// haproxyUp reports the servers the stats page at statsURL says are UP.
func haproxyUp(statsURL string) map[string]bool {
	resp, err := http.Get(statsURL + ";csv")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	status := slices.Index(strings.Split(strings.TrimPrefix(lines[0], "# "), ","), "status")
	up := map[string]bool{}
	for _, line := range lines[1:] {
		row := strings.Split(line, ",")
		if status >= 0 && status < len(row) && row[0] == "gateways" && row[1] != "BACKEND" && strings.HasPrefix(row[status], "UP") {
			up[row[1]] = true
		}
	}
	return up
}

// haproxyStat returns one column of the gateways backend's row svname on
// the stats page at statsURL ("" when missing).
func haproxyStat(statsURL, svname, column string) string {
	resp, err := http.Get(statsURL + ";csv")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	lines := strings.Split(string(b), "\n")
	col := slices.Index(strings.Split(strings.TrimPrefix(lines[0], "# "), ","), column)
	for _, line := range lines[1:] {
		row := strings.Split(line, ",")
		if col >= 0 && col < len(row) && row[0] == "gateways" && row[1] == svname {
			return row[col]
		}
	}
	return ""
}

// topoRequest is a generate request with deterministic sampling; format
// nil is a pass-through request. A guarded one may predict enough tokens
// for the model to close its object, so that its first answer is valid
// and needs no repair call.
func topoRequest(prompt string, stream bool, format json.RawMessage) string {
	m := map[string]any{"model": ollamatest.ModelName, "prompt": prompt, "stream": stream,
		"options": map[string]any{"num_predict": 32, "temperature": 0, "seed": 42}}
	if format != nil {
		m["format"] = format
		m["options"] = map[string]any{"num_predict": 256, "temperature": 0, "seed": 42}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// topoDo sends a request with a key and an id and reads the whole answer;
// it reports the status, the body and whether a stream ended with done.
func topoDo(client *http.Client, method, url, key, id, body string) (int, []byte, http.Header, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header, err
}

// answerText returns the model's text of a generate answer, streamed
// (NDJSON, which must end with done) or not.
func answerText(b []byte, stream bool) (string, error) {
	if !stream {
		var m struct{ Response string }
		if err := json.Unmarshal(b, &m); err != nil {
			return "", err
		}
		return m.Response, nil
	}
	var text strings.Builder
	done := false
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var m struct {
			Response string
			Done     bool
			Error    string
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return "", err
		}
		if m.Error != "" {
			return "", fmt.Errorf("stream error: %s", m.Error)
		}
		text.WriteString(m.Response)
		done = done || m.Done
	}
	if !done {
		return "", fmt.Errorf("stream ended without done: %.200s", b)
	}
	return text.String(), nil
}

// validPerson reports whether text is an object the schema allows.
func validPerson(text string) bool {
	var p map[string]any
	if json.Unmarshal([]byte(text), &p) != nil {
		return false
	}
	name, ok := p["name"].(string)
	age, ok2 := p["age"].(float64)
	return ok && ok2 && len(p) == 2 && name != "" && len(name) <= 20 && age >= 1 && age <= 120 && age == float64(int(age))
}

// TestTopology runs the deploy/ topology on loopback: HAProxy with
// deploy/haproxy.cfg in front of three gateway processes (the binary the
// Dockerfile builds) on one Redis, one PostgreSQL and two real Ollamas.
func TestTopology(t *testing.T) {
	if testing.Short() {
		t.Skip("the topology test starts nine processes")
	}
	haproxy := haproxyBinary(t)
	rds := redistest.Start(t)
	pg := pgtest.Start(t)
	ollamas := []*ollamatest.Server{ollamatest.Start(t), ollamatest.Start(t)}
	proxies := []*countingProxy{newCountingProxy(t, ollamas[0].URL), newCountingProxy(t, ollamas[1].URL)}
	generations := func() int64 { return proxies[0].generations.Load() + proxies[1].generations.Load() }

	dir := t.TempDir()
	bin := filepath.Join(dir, "gateway")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	cfgPath := filepath.Join(dir, "gateway.yaml")
	mustWrite(t, cfgPath, fmt.Sprintf(`upstreams:
  - url: %s
  - url: %s
upstream_health_interval: 1s
admin_token: %s
shutdown_delay: 1s
shutdown_grace: 10s
ad_hoc_schemas: true
cache:
  redis: %s
outcomes:
  postgres: %s
access:
  keys:
    - name: load
      sha256: %q
    - name: limited
      sha256: %q
      limits:
        requests_per_minute: %d
`, proxies[0].srv.URL, proxies[1].srv.URL, topoAdminToken, rds.URL, pg.DSN,
		hexSHA256(topoLoadKey), hexSHA256(topoLimitKey), topoLimit))

	replicas := make([]*replica, topoReplicas)
	for i := range replicas {
		r := &replica{name: fmt.Sprintf("gateway-%d", i+1), addr: freeAddr(t), bin: bin, config: cfgPath,
			state: filepath.Join(dir, fmt.Sprintf("state-%d", i+1)), log: filepath.Join(dir, fmt.Sprintf("gateway-%d.log", i+1))}
		replicas[i] = r
		t.Cleanup(func() {
			r.kill()
			if t.Failed() {
				t.Logf("%s log:\n%s", r.name, tail(r.log))
			}
		})
		r.start(t)
	}

	front, stats := freeAddr(t), freeAddr(t)
	statsCfg := filepath.Join(dir, "stats.cfg")
	mustWrite(t, statsCfg, "frontend stats\n    bind "+stats+"\n    stats enable\n    stats uri /stats\n")
	hlog := filepath.Join(dir, "haproxy.log")
	hlogf, err := os.Create(hlog)
	if err != nil {
		t.Fatal(err)
	}
	hp := exec.Command(haproxy, "-db", "-f", filepath.Join(deployDir, "haproxy.cfg"), "-f", statsCfg)
	// The shipped file with the test's ports; checks every 200ms (down
	// after 400ms, below shutdown_delay) and no retries, so that a
	// replica going away must not fail a request by itself.
	hp.Env = append(os.Environ(), "HAPROXY_BIND="+front, "HAPROXY_CHECK_INTER=200ms", "HAPROXY_RETRIES=0",
		"GW1="+replicas[0].addr, "GW2="+replicas[1].addr, "GW3="+replicas[2].addr)
	hp.Stdout, hp.Stderr = hlogf, hlogf
	if err := hp.Start(); err != nil {
		t.Fatal(err)
	}
	hpDone := make(chan struct{})
	go func() { hp.Wait(); hlogf.Close(); close(hpDone) }()
	t.Cleanup(func() {
		hp.Process.Kill()
		<-hpDone
		if t.Failed() {
			t.Logf("haproxy log:\n%s", tail(hlog))
		}
	})
	statsURL := "http://" + stats + "/stats"
	allUp := func() bool { return len(haproxyUp(statsURL)) == topoReplicas }
	defer func() {
		if t.Failed() {
			if resp, err := http.Get(statsURL + ";csv"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("haproxy stats:\n%s", b)
			}
		}
	}()
	waitFor(t, "haproxy sees every gateway up", 20*time.Second, allUp)
	base := "http://" + front
	client := &http.Client{Timeout: 60 * time.Second}
	t.Cleanup(client.CloseIdleConnections)

	t.Run("coalescing across replicas", func(t *testing.T) {
		const n = 30
		before := generations()
		body := topoRequest("Describe a person named Coalesce", false, topoSchema)
		type result struct {
			status int
			text   string
			cstat  string
			err    error
		}
		results := make(chan result, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				<-start
				status, b, h, err := topoDo(client, http.MethodPost, base+"/api/generate", topoLoadKey, "", body)
				var text string
				if err == nil && status == http.StatusOK {
					text, err = answerText(b, false)
				} else if err == nil {
					err = fmt.Errorf("status %d: %.200s", status, b)
				}
				var cs string
				if h != nil {
					cs = h.Get("X-Contract-Status")
				}
				results <- result{status, text, cs, err}
			})
		}
		close(start)
		wg.Wait()
		close(results)
		valid := 0
		for r := range results {
			switch {
			case r.err != nil:
				t.Errorf("guarded request: %v", r.err)
			case !validPerson(r.text) || (r.cstat != "valid" && r.cstat != "repaired"):
				t.Errorf("answer %q (X-Contract-Status %q) is not a valid person", r.text, r.cstat)
			default:
				valid++
			}
		}
		got := generations() - before
		t.Logf("coalescing: %d identical concurrent guarded requests through haproxy, %d valid answers, %d upstream generations", n, valid, got)
		if valid != n {
			t.Errorf("valid answers = %d, want %d", valid, n)
		}
		if got != 1 {
			t.Errorf("upstream generations = %d, want 1", got)
			for _, p := range proxies {
				p.mu.Lock()
				t.Logf("generations of %s: %q", p.srv.URL, p.bodies)
				p.mu.Unlock()
			}
		}
	})

	t.Run("requests_per_minute across replicas", func(t *testing.T) {
		var codes []int
		for i := range topoLimit + 1 {
			status, b, _, err := topoDo(client, http.MethodGet, base+"/api/tags", topoLimitKey, "", "")
			if err != nil {
				t.Fatal(err)
			}
			codes = append(codes, status)
			want := http.StatusOK
			if i == topoLimit {
				want = http.StatusTooManyRequests
			}
			if status != want {
				t.Errorf("request %d with the limited key = %d %s, want %d", i+1, status, b, want)
			}
		}
		t.Logf("requests_per_minute %d: statuses through haproxy %v", topoLimit, codes)
	})

	t.Run("outcome listed by another replica", func(t *testing.T) {
		id := "topo-cross-replica"
		status, b, _, err := topoDo(client, http.MethodPost, "http://"+replicas[0].addr+"/api/generate", topoLoadKey, id,
			topoRequest("Describe a person named Cross", false, topoSchema))
		if err != nil || status != http.StatusOK {
			t.Fatalf("guarded request to gateway-1 = %d %v %s", status, err, b)
		}
		waitFor(t, "gateway-3 lists gateway-1's outcome", 15*time.Second, func() bool {
			req, _ := http.NewRequest(http.MethodGet, "http://"+replicas[2].addr+"/admin/outcomes?limit=1000", nil)
			req.Header.Set("Authorization", "Bearer "+topoAdminToken)
			resp, err := client.Do(req)
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var page struct {
				Outcomes []struct{ ID string }
			}
			if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&page) != nil {
				return false
			}
			return slices.ContainsFunc(page.Outcomes, func(o struct{ ID string }) bool { return o.ID == id })
		})
	})

	t.Run("rolling restart under load", func(t *testing.T) {
		rollingRestart(t, client, base, statsURL, replicas, pg.DSN)
	})

	// The replicas keep their processes from here on: their memory is
	// measured before and after the two fault scenarios' loads.
	memBefore := sampleMemory(t, client, replicas)
	t.Run("PostgreSQL stopped under load", func(t *testing.T) {
		pgOutage(t, client, base, replicas, pg)
	})
	t.Run("one Ollama killed mid-load", func(t *testing.T) {
		ollamaKilled(t, client, base, ollamas[0], proxies[0])
	})
	logMemory(t, replicas, memBefore, sampleMemory(t, client, replicas), "across the outage and kill loads")
}

// rollingRestart holds a load of guarded and pass-through requests,
// streamed and not, through haproxy while each replica in turn gets
// SIGTERM and is started again; no client request may fail and every
// guarded answer must have its outcome record.
func rollingRestart(t *testing.T, client *http.Client, base, statsURL string, replicas []*replica, dsn string) {
	const (
		workers    = 4
		steadyEach = 40 // requests completed before and after the restarts
	)
	l := startLoad(client, base, "topo-roll-", workers, 90*time.Second)
	l.waitCompleted(t, "steady load before the restarts", steadyEach)
	restartBegin := time.Now()
	for _, r := range replicas {
		r.terminate(t)
		r.start(t)
		waitFor(t, "haproxy sees "+r.name+" up again", 20*time.Second, func() bool { return haproxyUp(statsURL)[r.name] })
	}
	restartEnd := time.Now()
	l.waitCompleted(t, "steady load after the restarts", l.done.Load()+steadyEach)
	samples := l.finish(t)

	var answered []string // ids of guarded requests answered
	var steady, during []time.Duration
	failed, guarded := 0, 0
	for _, s := range samples {
		if s.failed != "" {
			failed++
			if failed <= 5 {
				t.Errorf("client request %s failed: %s", s.id, s.failed)
			}
		}
		if s.guarded {
			guarded++
			if s.failed == "" {
				answered = append(answered, s.id)
			}
		}
		if !s.start.Before(restartBegin) && s.start.Before(restartEnd) {
			during = append(during, s.end.Sub(s.start))
		} else {
			steady = append(steady, s.end.Sub(s.start))
		}
	}
	t.Logf("rolling restart: %d requests sent (%d guarded), %d failed; restarts took %v; p99 steady %v (%d requests), p99 during restart %v (%d requests)",
		len(samples), guarded, failed, restartEnd.Sub(restartBegin).Round(time.Millisecond),
		p99(steady).Round(time.Millisecond), len(steady), p99(during).Round(time.Millisecond), len(during))
	if failed != 0 {
		t.Errorf("%d of %d client requests failed, want 0", failed, len(samples))
	}
	t.Logf("rolling restart: haproxy retries %s, redispatches %s (its retries are off: 0 means the gateways alone kept every request)",
		haproxyStat(statsURL, "BACKEND", "wretr"), haproxyStat(statsURL, "BACKEND", "wredis"))

	// Every replica flushed its queue on SIGTERM and the others write
	// theirs within a batch interval: the records of the guarded answers
	// are all in PostgreSQL.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var records int
	count := func() bool {
		err := conn.QueryRow(context.Background(), `SELECT count(DISTINCT id) FROM outcomes WHERE id LIKE 'topo-roll-%'`).Scan(&records)
		return err == nil && records >= len(answered)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !count() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("rolling restart: %d guarded requests answered, %d outcome records written", len(answered), records)
	if records != len(answered) {
		t.Errorf("outcome records = %d, want %d (one per guarded request answered)", records, len(answered))
	}
}

// p99 returns the 99th percentile of ds (0 for none).
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}
