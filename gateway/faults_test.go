package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
