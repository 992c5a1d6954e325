package benchload

import (
	"flag"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// FixedUpstream is a fake Ollama that answers every request with answer,
// a non-stream JSON object, at once: what the gateway adds is then all
// there is to time.
func FixedUpstream(answer string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, answer)
	}))
}

// Send posts body to url's /api/generate through client with h's
// headers, reads the answer whole and returns its header; any status but
// 200 ends the program, as a benchmark of failures measures nothing.
func Send(client *http.Client, url, body string, h http.Header) http.Header {
	req, _ := http.NewRequest(http.MethodPost, url+"/api/generate", strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("%s: status %d", url, resp.StatusCode)
	}
	return resp.Header
}

// Figures are one target's latency percentiles, in milliseconds, and its
// throughput, in requests a second.
type Figures struct {
	P50, P99, RPS float64
}

// Load is the load Measure puts on one target: N calls one after
// another, then calls from C goroutines for D.
type Load struct {
	N, C int
	D    time.Duration
}

// Start begins a side-by-side program: it registers -n, -c and -d on the
// program's flags, with the defaults the programs share (3000 calls, 16
// connections, 5s), parses the command line into the Load it returns,
// and starts a FixedUpstream answering answer, which the caller closes.
func Start(answer string) (*Load, *httptest.Server) {
	l := &Load{}
	flag.IntVar(&l.N, "n", 3000, "sequential requests per target at c=1")
	flag.IntVar(&l.C, "c", 16, "connections for the throughput figure")
	flag.DurationVar(&l.D, "d", 5*time.Second, "duration of the throughput run per target")
	flag.Parse()
	log.SetFlags(0)
	return l, FixedUpstream(answer)
}

// Measure times do with l.N calls one after another (p50 and p99), then
// counts its calls a second from l.C goroutines for l.D. Each phase has a
// client of its own, with idle connections enough for its concurrency,
// closed at its end.
func (l Load) Measure(do func(*http.Client)) Figures {
	seq := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	lat := Sequential(l.N, func() { do(seq) })
	seq.CloseIdleConnections()
	par := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: l.C}}
	rps := Throughput(l.C, l.D, func() { do(par) })
	par.CloseIdleConnections()
	return Figures{P50: Percentile(lat, 50), P99: Percentile(lat, 99), RPS: rps}
}
