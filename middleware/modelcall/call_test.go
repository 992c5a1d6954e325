package modelcall

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/ollama"
	"github.com/contractgateway/gateway/repair"
)

// answer is a whole /api/generate stream whose text is {"a":1}.
const answer = `{"model":"m","response":"{\"a\":1}","done":false}` + "\n" +
	`{"model":"m","response":"","done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}` + "\n"

// brokenOnce answers its first call with a stream that breaks off and
// every later one whole; failover says whether it is a pool of several.
type brokenOnce struct {
	calls    atomic.Int32
	failover bool
}

func (d *brokenOnce) Failover() bool { return d.failover }

func (d *brokenOnce) Do(req *http.Request) (*http.Response, error) {
	var body io.Reader = strings.NewReader(answer)
	if d.calls.Add(1) == 1 {
		body = io.MultiReader(strings.NewReader(answer[:30]), iotest.ErrReader(io.ErrUnexpectedEOF))
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/x-ndjson"}},
		Body: io.NopCloser(body), ContentLength: -1, Request: req}, nil
}

// TestCallerFailsOverOnce: an answer that broke off is asked once more
// of a pool of several upstreams, and is the client's 502 otherwise; the
// calls that brought no answer are charged to the request.
func TestCallerFailsOverOnce(t *testing.T) {
	tests := []struct {
		name      string
		failover  bool
		wantCalls int32
		wantText  string
		wantCode  int
	}{
		{"pool of several", true, 2, `{"a":1}`, 0},
		{"one upstream", false, 1, "", http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := &brokenOnce{failover: tt.failover}
			c := &Caller{Upstream: up}
			ctx, sp := WithSpent(context.Background())
			a, err := c.Do(ctx, Call{Path: "/api/generate", Body: []byte(`{"model":"m","prompt":"a prompt"}`), Model: "m"}, ollama.Generate{}, false)
			if got := up.calls.Load(); got != tt.wantCalls {
				t.Errorf("Do() made %d calls, want %d", got, tt.wantCalls)
			}
			if tt.wantCode != 0 {
				if he := apierr.From(err); err == nil || he.Status() != tt.wantCode {
					t.Fatalf("Do() = %v, want a %d", err, tt.wantCode)
				}
			} else if err != nil || a.Text != tt.wantText {
				t.Fatalf("Do() = %+v, %v; want the text %s", a, err, tt.wantText)
			}
			if first, _ := sp.Tokens(); first.PromptTokens == 0 {
				t.Errorf("Spent first call tokens = %+v, want the broken call's prompt estimated", first)
			}
		})
	}
}

// TestModelRefusesLargePrompts: a repair prompt over maxRepairPrompt is
// never sent.
func TestModelRefusesLargePrompts(t *testing.T) {
	up := &brokenOnce{}
	m := NewModel(up, "m")
	_, err := m.Complete(context.Background(), repair.ModelRequest{Prompt: strings.Repeat("x", maxRepairPrompt+1)})
	if err == nil || up.calls.Load() != 0 {
		t.Errorf("Complete(huge prompt) = %v after %d calls, want errPromptTooLarge and no call", err, up.calls.Load())
	}
}
