package gateway

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/contractgateway/gateway/config"
)

// meterUpstream is a fake Ollama whose answers carry no token counters,
// or only some: a generation that streams three chunks and then holds on
// until its caller leaves (reported on left), an OpenAI stream asked
// without stream_options.include_usage, and the three embedding APIs.
type meterUpstream struct {
	sent, left chan struct{}
}

func newMeterUpstream() *meterUpstream {
	return &meterUpstream{sent: make(chan struct{}, 1), left: make(chan struct{}, 1)}
}

func (u *meterUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	f := w.(http.Flusher)
	switch r.URL.Path {
	case "/api/generate":
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, s := range []string{`{\"a\":`, `1,`, `\"b\":`} {
			fmt.Fprintf(w, `{"model":"quiz","response":"%s","done":false}`+"\n", s)
			f.Flush()
		}
		u.sent <- struct{}{}
		giveUp := time.NewTimer(10 * time.Second)
		defer giveUp.Stop()
		select {
		case <-r.Context().Done():
			u.left <- struct{}{}
		case <-giveUp.C:
		}
	case "/v1/chat/completions":
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range []string{"Once", " upon", " a", " time", "."} {
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","model":"quiz","choices":[{"index":0,"delta":{"role":"assistant","content":%q},"finish_reason":null}]}`+"\n\n", s)
			f.Flush()
		}
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"quiz","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	case "/api/embeddings":
		io.WriteString(w, `{"embedding":[0.1,0.2]}`)
	case "/api/embed":
		io.WriteString(w, `{"model":"quiz","embeddings":[[0.1,0.2]],"prompt_eval_count":7}`)
	case "/v1/embeddings":
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","embedding":[0.1],"index":0}],"model":"quiz","usage":{"prompt_tokens":3,"total_tokens":3}}`)
	}
}

// meterGateway is the whole gateway with keys (the quiz-app key at
// limits, with models besides its own) in front of upstream, with an
// outcome store in dir; served receives each request (admin ones aside)
// once the gateway is done with it — charged its tokens, its record
// queued.
func meterGateway(t *testing.T, upstream string, limits config.AccessLimits, dir string, models ...string) (gw *httptest.Server, srv *Server, served chan struct{}) {
	t.Helper()
	cfg := config.Default()
	cfg.Upstream = upstream
	withKeys(limits, nil)(&cfg)
	cfg.Access.Keys[0].Models = append(cfg.Access.Keys[0].Models, models...)
	cfg.Outcomes.SQLite = filepath.Join(dir, "outcomes.db")
	srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(srv.Close)
	served = make(chan struct{}, 16)
	h := srv.Handler()
	gw = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/admin/") {
			// Deferred: a stream the client cut ends in net/http's abort
			// panic.
			defer func() { served <- struct{}{} }()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(gw.Close)
	return gw, srv, served
}

// keyTokens is what /admin/stats says the quiz-app key was charged.
func keyTokens(t *testing.T, gw string) int {
	t.Helper()
	resp, body := sendRequest(t, gw, "GET", "/admin/stats", nil, bearer("admin-token"))
	var stats StatsReport
	if err := json.Unmarshal(body, &stats); err != nil || resp.StatusCode != 200 {
		t.Fatalf("stats = %d %s", resp.StatusCode, body)
	}
	return stats.Keys["quiz-app"].Tokens
}

// TestAccessTokensWithoutCounters: a pass-through answer without Ollama's
// counters is charged what the upstream did: the prompt estimated from
// its text (ceil(bytes/4)) and a token per chunk read; an embedding its
// input, counted where Ollama counts it and estimated where it does not.
func TestAccessTokensWithoutCounters(t *testing.T) {
	tests := []struct {
		name, path, body string
		// cut is the number of lines the client reads before it leaves; 0
		// reads the whole answer.
		cut  int
		want int
	}{
		// "Tell a story": 12 bytes, 3 tokens; three chunks read.
		{"stream cut by the client", "/api/generate", `{"model":"quiz","prompt":"Tell a story","stream":true}`, 3, 3 + 3},
		// "user" and "Tell me a story": 19 bytes, 5 tokens; six chunks.
		{"openai stream without include_usage", "/v1/chat/completions", `{"model":"quiz","messages":[{"role":"user","content":"Tell me a story"}],"stream":true}`, 0, 5 + 6},
		// "abcdefgh": 8 bytes, 2 tokens.
		{"api/embeddings without counters", "/api/embeddings", `{"model":"quiz","prompt":"abcdefgh"}`, 0, 2},
		{"api/embed counted", "/api/embed", `{"model":"quiz","input":["abcdefgh"]}`, 0, 7},
		{"v1/embeddings counted", "/v1/embeddings", `{"model":"quiz","input":"abcdefgh"}`, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newMeterUpstream()
			ups := httptest.NewServer(up)
			defer ups.Close()
			gw, _, served := meterGateway(t, ups.URL, config.AccessLimits{TokensPerMinute: 1000}, t.TempDir())
			req, _ := http.NewRequest(http.MethodPost, gw.URL+tt.path, strings.NewReader(tt.body))
			req.Header = bearer(quizSecret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s = %d", tt.path, resp.StatusCode)
			}
			if tt.cut > 0 {
				br := bufio.NewReader(resp.Body)
				for range tt.cut {
					if _, err := br.ReadString('\n'); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				io.Copy(io.Discard, resp.Body)
			}
			resp.Body.Close()
			<-served
			if got := keyTokens(t, gw.URL); got != tt.want {
				t.Errorf("POST %s %s charged %d tokens, want %d", tt.path, tt.body, got, tt.want)
			}
		})
	}
}

// TestAccessTokensAbandonedGuarded: a guarded request whose client leaves
// while the model writes is charged (its prompt, estimated, and the
// chunks the guard read) and leaves its outcome record, and its upstream
// call ends.
func TestAccessTokensAbandonedGuarded(t *testing.T) {
	up := newMeterUpstream()
	ups := httptest.NewServer(up)
	defer ups.Close()
	dir := t.TempDir()
	gw, srv, served := meterGateway(t, ups.URL, config.AccessLimits{TokensPerMinute: 1000}, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/api/generate", strings.NewReader(`{"model":"quiz","prompt":"Tell a story","stream":false}`))
	req.Header = bearer(quizSecret)
	req.Header.Set("X-Contract", "json")
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-up.sent // the upstream has sent its chunks and waits: the client leaves
	cancel()
	<-up.left
	<-served
	// "Tell a story" is 3 tokens; the guard read up to three chunks.
	if got := keyTokens(t, gw.URL); got < 3 || got > 6 {
		t.Errorf("abandoned guarded request charged %d tokens, want its prompt (3) and up to three chunks", got)
	}
	srv.Close() // writes the queued records
	db, err := sql.Open("sqlite", filepath.Join(dir, "outcomes.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status, key string
	var prompt int
	if err := db.QueryRow(`SELECT status, access_key, first_prompt_tokens FROM outcomes`).Scan(&status, &key, &prompt); err != nil {
		t.Fatalf("outcome record of the abandoned request: %v", err)
	}
	if status != "error" || key != "quiz-app" || prompt != 3 {
		t.Errorf("outcome record = status %q, key %q, prompt tokens %d; want error, quiz-app, 3", status, key, prompt)
	}
}

// TestAccessConcurrentHoldsEarlyStopDrain: the rest of an early-stopped
// guarded call, read in the background after the answer, holds a place of
// the key in flight: a key at concurrent 1 gets 429 while it runs, rather
// than starting one generation after another that run outside its limits.
func TestAccessConcurrentHoldsEarlyStopDrain(t *testing.T) {
	release := make(chan struct{})
	ups := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, s := range []string{`{\"a\":`, `1}`, `\n`} {
			fmt.Fprintf(w, `{"model":"quiz","response":"%s","done":false}`+"\n", s)
			w.(http.Flusher).Flush()
		}
		<-release
		io.WriteString(w, `{"model":"quiz","response":"","done":true,"done_reason":"length","prompt_eval_count":9,"eval_count":40}`+"\n")
	}))
	defer ups.Close()
	defer close(release)
	gw, _, served := meterGateway(t, ups.URL, config.AccessLimits{Concurrent: 1}, t.TempDir())
	body := `{"model":"quiz","prompt":"Tell a story","stream":false,"format":{"type":"object","required":["a"]}}`
	header := bearer(quizSecret)
	header.Set("Cache-Control", "no-cache") // each to the upstream
	resp, b := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(body), header)
	<-served
	var got struct {
		Response string `json:"response"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil || got.Response != `{"a":1}` {
		t.Fatalf("early-stopped answer = %d %s, want 200 with the JSON value", resp.StatusCode, b)
	}
	resp, b = sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(body), header)
	<-served
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "in flight") {
		t.Errorf("the next request while the first one's rest is read = %d %s, want 429 over concurrent", resp.StatusCode, b)
	}
}
