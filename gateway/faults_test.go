package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.uber.org/goleak"

	"github.com/contractgateway/gateway/config"
)

// fault is one way an upstream fails.
type fault struct {
	name string
	// handler is the upstream; nil means nothing listens.
	handler http.HandlerFunc
}

const faultMaxResponse = 1 << 20

func faults() []fault {
	line := func(done bool) string {
		b, _ := json.Marshal(map[string]any{"model": "m", "response": `{"a":1}`, "done": done})
		return string(b) + "\n"
	}
	// A handler notices its client leaving only once it has read the
	// body: net/http watches the connection from then on.
	hang := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
	return []fault{
		{"down", nil},
		{"5xx", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"model runner has unexpectedly stopped"}`)
		}},
		{"hang", hang},
		{"cut mid-stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "4096")
			io.WriteString(w, line(false))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection drops mid-body
		}},
		{"headers then hang", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
		{"no final chunk", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, line(false)+line(false))
		}},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "\x00\x01<html>not ollama</html>")
		}},
		{"huge", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"model":"m","response":"`+strings.Repeat("x", 2*faultMaxResponse)+`","done":true}`)
		}},
	}
}

// want is what the client must see for a fault: the status, the Ollama
// error message (a prefix; "" for an answer that is not an error), and
// whether the client may instead see the connection end (pass-through
// answers that were already under way).
type want struct {
	status int
	msg    string
	cut    bool
}

func expected(f string, guarded bool) want {
	if guarded {
		return map[string]want{
			"down":              {http.StatusBadGateway, "upstream unreachable", false},
			"5xx":               {http.StatusInternalServerError, "model runner has unexpectedly stopped", false},
			"hang":              {http.StatusGatewayTimeout, "deadline exceeded", false},
			"cut mid-stream":    {http.StatusBadGateway, "upstream response incomplete", false},
			"headers then hang": {http.StatusGatewayTimeout, "deadline exceeded", false},
			"no final chunk":    {http.StatusBadGateway, "upstream response incomplete", false},
			"garbage":           {http.StatusBadGateway, "upstream answer unreadable", false},
			"huge":              {http.StatusBadGateway, "upstream response exceeds 1048576 bytes", false},
		}[f]
	}
	return map[string]want{
		"down":              {http.StatusBadGateway, "upstream unreachable", false},
		"5xx":               {http.StatusInternalServerError, "model runner has unexpectedly stopped", false},
		"hang":              {http.StatusGatewayTimeout, "upstream timed out", false},
		"cut mid-stream":    {http.StatusOK, "", true},
		"headers then hang": {http.StatusOK, "", true},
		"no final chunk":    {http.StatusOK, "", false},
		"garbage":           {http.StatusOK, "", false},
		"huge":              {http.StatusOK, "", false},
	}[f]
}

// TestFaults drives every upstream fault through the whole gateway,
// pass-through and guarded, stream and not, with and without Expect:
// 100-continue: each ends in bounded time with the right status and
// Ollama's error shape, and leaves no goroutine behind.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("64 gateways")
	}
	for _, f := range faults() {
		for _, guarded := range []bool{false, true} {
			for _, stream := range []bool{false, true} {
				for _, expect := range []bool{false, true} {
					name := f.name
					if guarded {
						name += "/guarded"
					} else {
						name += "/pass-through"
					}
					if stream {
						name += "/stream"
					}
					if expect {
						name += "/expect"
					}
					t.Run(name, func(t *testing.T) { runFault(t, f, guarded, stream, expect) })
				}
			}
		}
	}
}

func runFault(t *testing.T, f fault, guarded, stream, expect bool) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var upURL string
	if f.handler == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		upURL = "http://" + ln.Addr().String()
		ln.Close() // nothing listens there now
	} else {
		up := httptest.NewServer(f.handler)
		defer up.Close()
		upURL = up.URL
	}
	cfg := config.Default()
	cfg.Upstream = upURL
	cfg.Deadline = 300 * time.Millisecond
	cfg.UpstreamTimeout = 600 * time.Millisecond
	cfg.MaxResponseBytes = faultMaxResponse
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	gw := httptest.NewServer(srv.Handler())
	defer gw.Close()

	body := `{"model":"m","prompt":"p","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `}`
	// The client gives up after a second: every fault ends before, but a
	// pass-through stream that stalls after its headers (by nature
	// unbounded: generations are long).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/api/generate", strings.NewReader(body))
	if guarded {
		req.Header.Set("X-Contract", "json")
	}
	if expect {
		req.Header.Set("Expect", "100-continue")
	}
	tr := &http.Transport{ExpectContinueTimeout: time.Second}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	w := expected(f.name, guarded)

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)
	if elapsed > 2*time.Second {
		t.Errorf("took %s, want within the 300 ms deadline, the 600 ms upstream timeout, or the client's second", elapsed)
	}
	if resp.StatusCode != w.status {
		t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, w.status, b)
	}
	switch {
	case w.cut:
		// The answer was under way when the upstream failed: the client
		// sees it end early (or the deadline of its own context).
		if readErr == nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) && f.name != "headers then hang" {
			t.Errorf("a cut pass-through answer read whole: %q", b)
		}
	case w.msg != "":
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil || !strings.HasPrefix(e.Error, w.msg) {
			t.Errorf("body %.200s, want Ollama's {\"error\": %q…}", b, w.msg)
		}
		if strings.Contains(string(b), "127.0.0.1") {
			t.Errorf("the error names an internal address: %s", b)
		}
	case guarded:
		t.Fatalf("no case for a guarded success")
	default:
		if readErr != nil {
			t.Errorf("pass-through read: %v", readErr)
		}
	}
	if guarded && resp.StatusCode == http.StatusOK && resp.Header.Get("X-Contract-Status") == "" {
		t.Errorf("a guarded 200 without X-Contract-Status: a silent pass")
	}
}

// clientFault is a request whose body breaks on the client's side: its
// framing is malformed, or it ends before it should. The upstream never
// sees a whole request, so none of these is the upstream's failure.
type clientFault struct {
	name string
	// raw is everything after the request line's path: the headers, the
	// blank line and the (broken) body.
	raw string
	// halfClose ends the client's sending side after raw, as a client
	// that has sent all it will send and waits for the answer.
	halfClose bool
}

func clientFaults() []clientFault {
	const doc = `{"model":"m","input":"x"}`
	return []clientFault{
		{"bare LF after the chunk size", "Transfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", false},
		{"bad hex chunk size", "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", false},
		{"chunk size overflow", "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nhello\r\n0\r\n\r\n", false},
		{"truncated chunked body", "Transfer-Encoding: chunked\r\n\r\n40\r\n" + doc[:10], true},
		{"chunked body without its last chunk", "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(doc), doc), true},
		{"short Content-Length body", fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(doc)+50, doc), true},
	}
}

// TestClientFaultsAreTheClients sends each malformed body, over and over,
// to pass-through routes (one the guard reads first and lets through, one
// it never sees): every one is a 400 in Ollama's shape, never a 5xx or an
// empty 200, and none counts against the upstream: the breaker stays
// closed and the next well-formed request reaches the upstream.
func TestClientFaultsAreTheClients(t *testing.T) {
	const repeat = 10 // twice the default failure threshold
	paths := []string{"/api/embed", "/api/generate"}
	for _, cf := range clientFaults() {
		for _, path := range paths {
			t.Run(cf.name+path, func(t *testing.T) {
				var reached atomic.Int32
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if _, err := io.Copy(io.Discard, r.Body); err != nil {
						return // a cut body: the upstream answers nothing
					}
					reached.Add(1)
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"model":"m","embeddings":[[1]],"response":"ok","done":true}`)
				}))
				defer up.Close()
				cfg := config.Default()
				cfg.Upstream = up.URL
				srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				gw := httptest.NewServer(srv.Handler())
				defer gw.Close()

				for i := range repeat {
					status, body := sendRaw(t, gw.Listener.Addr().String(), "POST "+path+" HTTP/1.1\r\nHost: localhost\r\n"+cf.raw, cf.halfClose)
					if status != http.StatusBadRequest {
						t.Fatalf("request %d: status %d %q, want 400", i, status, body)
					}
					var e map[string]any
					if err := json.Unmarshal([]byte(body), &e); err != nil || len(e) != 1 || e["error"] == nil {
						t.Fatalf("request %d: body %q, want Ollama's {\"error\": …}", i, body)
					}
				}
				if s := srv.Breaker().State(); s != gobreaker.StateClosed {
					t.Fatalf("breaker %v after %d malformed bodies, want closed", s, repeat)
				}
				resp, body := sendRequest(t, gw.URL, http.MethodPost, path, strings.NewReader(`{"model":"m","input":"x","prompt":"p","stream":false}`), nil)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("a well-formed request after them: %d %s, want 200", resp.StatusCode, body)
				}
				if n := reached.Load(); n != 1 {
					t.Errorf("the upstream got %d whole requests, want 1 (the well-formed one)", n)
				}
			})
		}
	}
}

// sendRaw writes request on a new connection, half-closes it when asked,
// and returns the status and body of the answer.
func sendRaw(t *testing.T, addr, request string, halfClose bool) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, string(b)
}
