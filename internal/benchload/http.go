package benchload

import (
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

// Measure times do with n calls one after another (p50 and p99), then
// counts its calls a second from c goroutines for d. Each phase has a
// client of its own, with idle connections enough for its concurrency,
// closed at its end.
func Measure(n, c int, d time.Duration, do func(*http.Client)) Figures {
	seq := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	lat := Sequential(n, func() { do(seq) })
	seq.CloseIdleConnections()
	par := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	rps := Throughput(c, d, func() { do(par) })
	par.CloseIdleConnections()
	return Figures{P50: Percentile(lat, 50), P99: Percentile(lat, 99), RPS: rps}
}
