package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
)

// TestGuardExpectContinue: a guarded request sent with Expect:
// 100-continue (curl sends it by itself for large bodies) is guarded like
// any other: the upstream never sees the client's Expect, the answer
// carries the contract headers and a valid document, and an upstream 5xx
// keeps its status.
func TestGuardExpectContinue(t *testing.T) {
	var mu sync.Mutex
	var expects []string
	status := http.StatusOK
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		expects = append(expects, r.Header.Get("Expect"))
		st := status
		mu.Unlock()
		io.Copy(io.Discard, r.Body)
		if st != http.StatusOK {
			w.WriteHeader(st)
			io.WriteString(w, `{"error":"model runner crashed"}`)
			return
		}
		io.WriteString(w, `{"model":"m","response":"{\"a\":\"x\"} bad trailing {","done":true,"done_reason":"stop"}`)
	})
	gw := newGuardedGateway(t, up, nil)
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}
	t.Cleanup(client.CloseIdleConnections)
	send := func() (*http.Response, []byte) {
		body := `{"model":"m","stream":false,"format":{"type":"object","required":["a"]}}`
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/generate", strings.NewReader(body))
		req.Header.Set("Expect", "100-continue")
		// Each time the upstream's answer, not the cached one.
		req.Header.Set("Cache-Control", "no-cache")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	resp, b := send()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Contract-Status") == "" {
		t.Fatalf("Expect: 100-continue: got %d, X-Contract-Status %q: %s", resp.StatusCode, resp.Header.Get("X-Contract-Status"), b)
	}
	var m struct{ Response string }
	if err := json.Unmarshal(b, &m); err != nil || m.Response != `{"a":"x"}` {
		t.Errorf("response = %q (%v), want the valid document {\"a\":\"x\"}", m.Response, err)
	}

	mu.Lock()
	status = http.StatusServiceUnavailable
	mu.Unlock()
	resp, b = send()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "model runner crashed") {
		t.Errorf("upstream 503 with Expect: got %d %s, want 503 with the upstream's message", resp.StatusCode, b)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, e := range expects {
		if e != "" {
			t.Errorf("upstream call %d carried Expect %q", i, e)
		}
	}
}

// TestGuardRejectsUnknownParams: a misspelt parameter is a 400 that lists
// the contract's parameters and their forms, not a guard without the rule.
func TestGuardRejectsUnknownParams(t *testing.T) {
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}}
	gw := newGuardedGateway(t, up, nil)
	tests := []struct {
		params string
		want   []string
	}{
		{"questoin_count=12", []string{`unknown param \"questoin_count\"`, "question_count=a positive integer", "options=A", "difficulty="}},
		{"options=Z", []string{`options=\"Z\"`}},
		{"difficulty=medium", []string{"difficulty", "3/5/2"}},
	}
	for _, tt := range tests {
		resp, b := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz","stream":false}`,
			map[string]string{"X-Contract": "mcq", "X-Contract-Params": tt.params})
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("X-Contract-Params %q: status %d, want 400: %s", tt.params, resp.StatusCode, b)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("X-Contract-Params %q: error %s lacks %q", tt.params, b, w)
			}
		}
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("%d upstream calls for rejected requests, want 0", n)
	}
}

// TestBuildRejectsBadRouteParams: a config route with an unknown or bad
// parameter fails at startup, naming the route.
func TestBuildRejectsBadRouteParams(t *testing.T) {
	for _, params := range []map[string]string{{"questoin_count": "5"}, {"difficulty": "medium"}} {
		cfg := config.Default()
		cfg.Routes = []config.Route{{Model: "quiz", Contract: "mcq", Params: params}}
		if _, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "quiz") {
			t.Errorf("Build(route params %v) = %v, want an error naming the route", params, err)
		}
	}
}

// TestExampleConfigServes builds the server from the shipped
// examples/config.yaml, not only loads it, and asks its virtual model.
func TestExampleConfigServes(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "examples", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_valid.json")}}
	gw := newGuardedGateway(t, up, func(c *config.Config) {
		upstream := c.Upstream
		*c = cfg
		c.Upstream = upstream
	})
	resp, b := post(t, gw.URL+"/api/generate", `{"model":"quiz","prompt":"quiz","stream":false}`, nil)
	if resp.Header.Get("X-Contract") == "" {
		t.Fatalf("the example's virtual model quiz is not guarded: %d %s", resp.StatusCode, b)
	}
	if reqs := up.requests(); len(reqs) == 0 || reqs[0]["model"] != "llama3.2" {
		t.Errorf("upstream requests %v, want the route's upstream model llama3.2 first", reqs)
	}
}

// TestGuardIncompleteAnswers: an upstream answer that ends before its end
// is a 502 saying so — not "too large", never a valid answer.
func TestGuardIncompleteAnswers(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"ndjson without done", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"model":"m","response":"{\"a\":1}","done":false}`+"\n")
		}, "upstream response incomplete"},
		{"cut mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, `{"model":"m","response":"{\"a\":1}"`)
		}, "upstream response incomplete"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `<html>`)
		}, "upstream answer unreadable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := newGuardedGateway(t, tt.handler, nil)
			resp, b := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p","stream":false}`, map[string]string{"X-Contract": "json"})
			if resp.StatusCode != http.StatusBadGateway || ollamaError(t, resp, b) != tt.want {
				t.Errorf("got %d %s, want 502 %q", resp.StatusCode, b, tt.want)
			}
		})
	}
}

// TestGuardCallsCarryRequestID: every upstream call of a guarded request —
// the first answer and the repair calls — carries the request's id, so the
// upstream's log lines can be matched to it.
func TestGuardCallsCarryRequestID(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	inner := &scriptedUpstream{answers: []string{readFixture(t, "mcq_content_fault.json"), readFixture(t, "mcq_valid.json")}}
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("X-Request-Id"))
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	gw := newGuardedGateway(t, up, nil)
	resp, b := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz","stream":false}`,
		map[string]string{"X-Contract": "mcq", "X-Request-Id": "req-42"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) < 2 {
		t.Fatalf("%d upstream calls, want the first answer and a repair call", len(ids))
	}
	for i, id := range ids {
		if id != "req-42" {
			t.Errorf("upstream call %d: X-Request-Id %q, want req-42", i, id)
		}
	}
}

// TestGuardChunkedOversizeBody: a chunked body sent with Expect:
// 100-continue over the default limit (32 MiB) is a 413 in Ollama's shape.
func TestGuardChunkedOversizeBody(t *testing.T) {
	up := &scriptedUpstream{answers: []string{`{"a":1}`}}
	gw := newGuardedGateway(t, up, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		io.WriteString(conn, "POST /api/generate HTTP/1.1\r\nHost: localhost\r\nX-Contract: json\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
		chunk := strings.Repeat("x", 64<<10)
		for i := 0; i < 640; i++ {
			if _, err := io.WriteString(conn, "10000\r\n"+chunk+"\r\n"); err != nil {
				return
			}
		}
		io.WriteString(conn, "0\r\n\r\n")
	}()
	// A guard against a hang only: 32 MiB read under the race detector on
	// a loaded machine takes seconds.
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(conn)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusContinue {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "too large") {
			t.Errorf("got %d %s, want 413", resp.StatusCode, b)
		}
		return
	}
}

// TestGuardRefusesHostileSchemas: a format schema nested 3,000 levels deep
// (over a minute of a core to compile) and a 2 MB one (about 65 MB of
// heap each, compiled) are refused with a 400 naming the limit, before any
// compilation and without asking the upstream.
func TestGuardRefusesHostileSchemas(t *testing.T) {
	up := &scriptedUpstream{answers: []string{`{"a":1}`}}
	gw := newGuardedGateway(t, up, nil)
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 3000) + `{"type":"string"}` + strings.Repeat(`}}`, 3000)
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 30000 {
		if i > 0 {
			wide.WriteString(",")
		}
		fmt.Fprintf(&wide, `"property_%05d":{"type":"string","maxLength":10}`, i)
	}
	wide.WriteString(`}}`)
	tests := []struct {
		name, schema, limit string
	}{
		{"3000 levels", deep, "depth"},
		{"2 MB flat", wide.String(), "bytes"},
	}
	for _, tt := range tests {
		resp, b := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p","stream":false,"format":`+tt.schema+`}`, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(ollamaError(t, resp, b), tt.limit+" over the limit") {
			t.Errorf("%s: got %d %.200s, want 400 naming the %s limit", tt.name, resp.StatusCode, b, tt.limit)
		}
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("%d upstream calls for refused schemas, want 0", n)
	}
}
