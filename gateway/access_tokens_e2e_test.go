//go:build unix

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/ollamatest"
)

// TestE2EAccessTokensCutStream: on the real Ollama, a pass-through
// /api/generate stream the client cuts after three chunks is charged
// (its prompt, estimated, and the three chunks), so that a key at a small
// tokens_per_minute gets 429 on its next request; the embedding APIs are
// charged their input.
func TestE2EAccessTokensCutStream(t *testing.T) {
	o := ollamatest.Start(t)
	gw, _, served := meterGateway(t, o.URL, config.AccessLimits{TokensPerMinute: 5}, t.TempDir(), o.Model)
	body := `{"model":"` + o.Model + `","prompt":"Once upon a time","stream":true,"options":{"num_predict":100000,"temperature":0}}`
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api/generate", strings.NewReader(body))
	req.Header = bearer(quizSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream = %d %s", resp.StatusCode, b)
	}
	br := bufio.NewReader(resp.Body)
	for range 3 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	resp.Body.Close()
	<-served
	// "Once upon a time": 16 bytes, 4 tokens; three chunks read, and
	// whatever more the gateway passed on before the client left.
	if got := keyTokens(t, gw.URL); got < 4+3 {
		t.Errorf("the cut stream was charged %d tokens, want 7 or more", got)
	}
	resp, b := sendRequest(t, gw.URL, "POST", "/api/generate", strings.NewReader(body), bearer(quizSecret))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("the request after the cut stream = %d %s, want 429 with Retry-After", resp.StatusCode, b)
	}
	<-served

	tests := []struct{ path, body string }{
		{"/api/embed", `{"model":"` + o.Model + `","input":"Once upon a time"}`},
		{"/api/embeddings", `{"model":"` + o.Model + `","prompt":"Once upon a time"}`},
		{"/v1/embeddings", `{"model":"` + o.Model + `","input":"Once upon a time"}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			gw, _, served := meterGateway(t, o.URL, config.AccessLimits{TokensPerMinute: 1000}, t.TempDir(), o.Model)
			resp, b := sendRequest(t, gw.URL, "POST", tt.path, strings.NewReader(tt.body), bearer(quizSecret))
			<-served
			got := keyTokens(t, gw.URL)
			t.Logf("%s = %d, charged %d tokens: %.200s", tt.path, resp.StatusCode, got, b)
			if resp.StatusCode == http.StatusOK && got <= 0 {
				t.Errorf("%s answered %s and was charged %d tokens, want its input", tt.path, b, got)
			}
		})
	}
}

// TestE2EEarlyStopFreesOllama: on the real Ollama, a guarded call the
// guard stopped once its JSON value closed (early stop), its rest read in
// the background, does not hold the model: the next request, sent at
// once, is answered. (Cutting the call instead left the next request
// waiting past 30 s once in 18 early stops: see upstream.Stream.Drain.)
func TestE2EEarlyStopFreesOllama(t *testing.T) {
	o := ollamatest.Start(t)
	proxy := newCountingProxy(t, o.URL)
	gw := startE2EGateway(t, e2eConfig(t, proxy.URL))
	for i := range 3 {
		body := fmt.Sprintf(`{"model":%q,"prompt":"Once upon a time %d","stream":false,"options":{"num_predict":100000,"temperature":0}}`, e2eStoryRoute, i)
		start := time.Now()
		resp, b := post(t, gw+pathGenerate, body, map[string]string{"Cache-Control": "no-cache"})
		took := time.Since(start)
		var got struct {
			DoneReason string `json:"done_reason"`
			Response   string `json:"response"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil || !json.Valid([]byte(got.Response)) {
			t.Fatalf("guarded %d = %d %.300s", i, resp.StatusCode, b)
		}
		// The next request, at once, straight to Ollama.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start = time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, o.URL+pathGenerate,
			strings.NewReader(`{"model":"`+o.Model+`","prompt":"Once","stream":false,"options":{"num_predict":4,"temperature":0}}`))
		next, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("the request after the early stop: %v", err)
		}
		nb, _ := io.ReadAll(next.Body)
		next.Body.Close()
		cancel()
		t.Logf("guarded %d: %s, upstream calls %v; next request %d in %s", i, took.Round(time.Millisecond), proxy.modelCalls(), next.StatusCode, time.Since(start).Round(time.Millisecond))
		if next.StatusCode != http.StatusOK {
			t.Fatalf("the request after the early stop = %d %s", next.StatusCode, nb)
		}
	}
}
