package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// doerFunc adapts a function to Doer.
type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// answer is a response of status with body; length is its announced
// Content-Length (-1: unknown).
func answer(status int, body string, length int64, header http.Header) doerFunc {
	return func(*http.Request) (*http.Response, error) {
		if header == nil {
			header = http.Header{}
		}
		return &http.Response{StatusCode: status, Header: header, ContentLength: length, Body: io.NopCloser(strings.NewReader(body))}, nil
	}
}

// TestSend: a 2xx answer comes back whole; an error status is the
// upstream's status and message with its Retry-After; an answer over the
// limit (announced or not) and one cut short are 502s that say so; an
// error of the round trip is mapped, a foreign Doer's as the client's.
func TestSend(t *testing.T) {
	ok := `{"response":"hi","done":true}`
	tests := []struct {
		name     string
		do       doerFunc
		limit    int64
		wantBody string
		wantCode int    // 0: success
		wantMsg  string // the client's message
		wantRA   string // Retry-After
	}{
		{"whole answer", answer(200, ok, int64(len(ok)), nil), 1 << 20, ok, 0, "", ""},
		{"unknown length", answer(200, ok, -1, nil), 1 << 20, ok, 0, "", ""},
		{"no limit", answer(200, ok, -1, nil), -1, ok, 0, "", ""},
		{"exactly the limit", answer(200, ok, -1, nil), int64(len(ok)), ok, 0, "", ""},
		{"Ollama's error", answer(404, `{"error":"model \"x\" not found, try pulling it first"}`, -1, nil), 1 << 20, "", 404, `model "x" not found, try pulling it first`, ""},
		{"OpenAI's error", answer(400, `{"error":{"message":"bad tools","type":"invalid_request_error"}}`, -1, nil), 1 << 20, "", 400, "bad tools", ""},
		{"busy with Retry-After", answer(503, `{"error":"server busy"}`, -1, http.Header{"Retry-After": {"7"}}), 1 << 20, "", 503, "server busy", "7"},
		{"error page", answer(502, "<html>bad gateway</html>", -1, nil), 1 << 20, "", 502, "upstream answered 502", ""},
		{"announced over the limit", answer(200, ok, int64(len(ok)), nil), 10, "", 502, "upstream response exceeds 10 bytes", ""},
		{"read over the limit", answer(200, ok, -1, nil), 10, "", 502, "upstream response exceeds 10 bytes", ""},
		{"cut short", answer(200, ok, int64(len(ok))+10, nil), 1 << 20, "", 502, "upstream response incomplete", ""},
		{"foreign Doer unreachable", func(*http.Request) (*http.Response, error) { return nil, errRefused }, 1 << 20, "", 502, "upstream unreachable", ""},
		{"foreign Doer's own error", func(*http.Request) (*http.Response, error) {
			return nil, &apierr.Error{Code: 503, Msg: "circuit open"}
		}, 1 << 20, "", 503, "circuit open", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, "/api/generate", strings.NewReader(`{}`))
			reply, err := Send(tt.do, req, tt.limit)
			if tt.wantCode == 0 {
				if err != nil || string(reply.Body) != tt.wantBody {
					t.Fatalf("Send = %q, %v; want %q", reply.Body, err, tt.wantBody)
				}
				return
			}
			he := apierr.From(err)
			if he.Status() != tt.wantCode || he.Message() != tt.wantMsg || he.Header.Get("Retry-After") != tt.wantRA {
				t.Errorf("Send error = %d %q (Retry-After %q), want %d %q (%q)", he.Status(), he.Message(), he.Header.Get("Retry-After"), tt.wantCode, tt.wantMsg, tt.wantRA)
			}
		})
	}
}

// TestSendIncompleteIsErrIncomplete: an answer cut short wraps
// ErrIncomplete, so callers can tell it from the upstream's own errors.
func TestSendIncompleteIsErrIncomplete(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "/api/generate", nil)
	_, err := Send(answer(200, "{", 100, nil), req, 0)
	if !errors.Is(err, ErrIncomplete) {
		t.Errorf("Send of a cut answer = %v, want ErrIncomplete", err)
	}
}

// blockingBody is an answer body whose read waits for its request's
// context to end, as a stalled upstream's does.
type blockingBody struct{ ctx context.Context }

func (b blockingBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, errors.New("read: connection closed")
}
func (blockingBody) Close() error { return nil }

// TestSendContextWhileReading: the request's context ending while the
// answer is read is the context's error, which apierr.From maps to 499
// (the client left) or 504 (the deadline passed), not an incomplete
// answer.
func TestSendContextWhileReading(t *testing.T) {
	tests := []struct {
		name     string
		ctx      func() (context.Context, context.CancelFunc)
		wantCode int
	}{
		{"client left", cancelledCtx, apierr.StatusClientClosedRequest},
		{"deadline", expiredCtx, http.StatusGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/api/generate", nil)
			do := doerFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: -1, Body: blockingBody{r.Context()}}, nil
			})
			_, err := Send(do, req, 0)
			if got := apierr.From(err).Status(); got != tt.wantCode {
				t.Errorf("Send = %v (status %d), want %d", err, got, tt.wantCode)
			}
		})
	}
}

// FuzzStatusError: whatever an upstream answers with an error status, the
// client gets that status and a message of bounded length, and the log
// line's cause is bounded too.
func FuzzStatusError(f *testing.F) {
	for _, seed := range []string{
		`{"error":"model 'x' not found"}`,
		`{"error":{"message":"bad","type":"invalid_request_error"}}`,
		`{"error":null}`, `{"error":12}`, `{"error":"` + strings.Repeat("é", 400) + `"}`,
		"<html>502</html>", "", "\xff\xfe", `{"error":"a\u0000b"}`,
	} {
		f.Add(500, seed)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		status = 400 + int(uint(status)%200)
		he := StatusError(&http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))})
		if he.Status() != status {
			t.Errorf("Status() = %d, want %d", he.Status(), status)
		}
		bound := maxLoggedErrorBody + len("… ( bytes left out)") + 2*len(strconv.Itoa(maxErrorBody)) + 2
		if len(he.Message()) > bound {
			t.Errorf("Message() is %d bytes, want at most %d", len(he.Message()), bound)
		}
		if len(he.Cause()) > 2*bound+64 {
			t.Errorf("Cause() is %d bytes, want at most %d", len(he.Cause()), 2*bound+64)
		}
	})
}
