package pool

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contractgateway/gateway/internal/logcount"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// oversize is how much a hostile member answers: more than the pool's
// bound, finite.
const oversize = MaxMemberAnswerBytes + 1<<20

// readSlack is what the pool may read of an answer past its bound: the
// byte that shows the answer is over it, and one read's worth.
const readSlack = 64 << 10

// hugeMember answers every request with a JSON answer of the right shape
// (so that a pool that read it whole would take its model in) padded to
// oversize bytes, sent in chunks of unannounced length; written counts
// the bytes its handler got onto the connection.
type hugeMember struct {
	srv     *httptest.Server
	written atomic.Int64
}

func newHugeMember(t *testing.T) *hugeMember {
	t.Helper()
	h := &hugeMember{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var head string
		switch r.URL.Path {
		case "/v1/models":
			head = `{"object":"list","data":[{"id":"huge:latest","object":"model"}],"pad":"`
		case "/api/tags", "/api/ps":
			head = `{"models":[{"name":"huge:latest","model":"huge:latest"}],"pad":"`
		default: // pull, delete: one progress line, no error
			head = `{"status":"pulling manifest","pad":"`
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		n, _ := io.WriteString(w, head)
		sent := n
		chunk := strings.Repeat("x", 64<<10)
		for sent < oversize {
			n, err := io.WriteString(w, chunk)
			sent += n
			if err != nil {
				break
			}
		}
		if sent >= oversize {
			n, _ = io.WriteString(w, `"}`)
			sent += n
		}
		h.written.Add(int64(sent))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// smallMember is a sound Ollama with one model, "small".
func smallMember(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"small:latest","object":"model"}]}`)
		case "/api/tags", "/api/ps":
			io.WriteString(w, `{"models":[{"name":"small:latest","model":"small:latest"}]}`)
		case "/api/pull":
			io.WriteString(w, `{"status":"pulling manifest"}`+"\n"+`{"status":"success"}`+"\n")
		case "/api/delete":
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// countingTransport counts the bytes read of the answers that come from
// host.
type countingTransport struct {
	base http.RoundTripper
	host string
	read atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil && req.URL.Host == c.host {
		resp.Body = &countingReader{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

type countingReader struct {
	io.ReadCloser
	n *atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// TestPoolBoundsWhatItReadsOfAMember: a member that answers more than
// MaxMemberAnswerBytes to a listing or to a fanned-out request is read no
// further than the bound: a listing is the union of the other members',
// a fan-out names it as failed, and one warning says so however often it
// happens.
func TestPoolBoundsWhatItReadsOfAMember(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		code                     int    // 0: a union
		want                     string // in the answer's body, or its error's message
	}{
		{"tags", http.MethodGet, "/api/tags", "", 0, `{"models":[{"name":"small:latest","model":"small:latest"}]}`},
		{"ps", http.MethodGet, "/api/ps", "", 0, `{"models":[{"name":"small:latest","model":"small:latest"}]}`},
		{"openai models", http.MethodGet, "/v1/models", "", 0, `{"data":[{"id":"small:latest","object":"model"}],"object":"list"}`},
		{"pull", http.MethodPost, "/api/pull", `{"model":"m","stream":false}`, http.StatusBadGateway, "pull failed on 1 of 2 upstreams"},
		{"streamed pull", http.MethodPost, "/api/pull", `{"model":"m"}`, http.StatusOK, `{"error":"pull failed on 1 of 2 upstreams`},
		{"delete", http.MethodDelete, "/api/delete", `{"model":"m"}`, http.StatusBadGateway, "delete failed on 1 of 2 upstreams"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good, bad := smallMember(t), newHugeMember(t)
			gu, _ := url.Parse(good.URL)
			bu, _ := url.Parse(bad.srv.URL)
			tr := &countingTransport{base: http.DefaultTransport, host: bu.Host}
			logs := &logcount.Counter{}
			p := New(Options{Members: []Member{{URL: gu}, {URL: bu}}, Transport: tr, HealthInterval: -1, Logger: slog.New(logs)})
			t.Cleanup(p.Close)
			const asks = 2
			for i := range asks {
				req, _ := http.NewRequestWithContext(context.Background(), tt.method, tt.path, strings.NewReader(tt.body))
				resp, err := p.RoundTrip(req)
				var got string
				code := 0
				if err != nil {
					he := apierr.From(err)
					got, code = he.Message(), he.Status()
				} else {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					got = string(b)
					if tt.code != 0 {
						code = resp.StatusCode
					}
				}
				if code != tt.code || !strings.Contains(got, tt.want) || (tt.code != 0 && !strings.Contains(got, bad.srv.URL)) {
					t.Errorf("ask %d: %s %s = %d %.300s, want %d with %s, naming %s when not a union", i, tt.method, tt.path, code, got, tt.code, tt.want, bad.srv.URL)
				}
				if strings.Contains(got, "huge") {
					t.Errorf("ask %d: the answer holds the oversize member's model: %.300s", i, got)
				}
			}
			if n := tr.read.Load(); n > asks*(MaxMemberAnswerBytes+readSlack) {
				t.Errorf("read %d bytes of the oversize member's %d answers of %d bytes, want at most %d", n, asks, oversize, asks*(MaxMemberAnswerBytes+readSlack))
			}
			if n := logs.Count(slog.LevelWarn); n != 1 {
				t.Errorf("%d warnings for %d oversize answers, want 1", n, asks)
			}
			if s := p.Stats()[1]; s.Errors != asks {
				t.Errorf("the oversize member's errors = %d, want %d", s.Errors, asks)
			}
			t.Logf("%s: read %d bytes of %d oversize answers; the member wrote %d", tt.name, tr.read.Load(), asks, bad.written.Load())
		})
	}
}

// TestPoolListingAllOversize: when every member answers over the bound,
// the union is the error in Ollama's shape, a 502 naming the bound.
func TestPoolListingAllOversize(t *testing.T) {
	a, b := newHugeMember(t), newHugeMember(t)
	au, _ := url.Parse(a.srv.URL)
	bu, _ := url.Parse(b.srv.URL)
	p := New(Options{Members: []Member{{URL: au}, {URL: bu}}, HealthInterval: -1, Logger: slog.New(&logcount.Counter{})})
	t.Cleanup(p.Close)
	_, err := p.Get(context.Background(), "/api/tags", nil)
	if he := apierr.From(err); he.Status() != http.StatusBadGateway || !strings.Contains(he.Message(), "exceeds 16777216 bytes") {
		t.Errorf("Get(/api/tags) with both members oversize = %v, want 502 upstream response exceeds 16777216 bytes", err)
	}
}

// TestFanOutLines: a fanned-out answer keeps its first error line, else
// its last line; a line over the bound is a 502.
func TestFanOutLines(t *testing.T) {
	tests := []struct {
		name, body, want string
		code             int
	}{
		{"one object", `{"status":"success"}`, `{"status":"success"}`, 0},
		{"progress then success", "{\"status\":\"pulling\"}\n{\"status\":\"success\"}\n", `{"status":"success"}`, 0},
		{"error then more", "{\"status\":\"pulling\"}\n{\"error\":\"no space left\"}\n{\"status\":\"x\"}\n", `{"error":"no space left"}`, 0},
		{"empty", "", "", 0},
		{"one line over the bound", `{"status":"` + strings.Repeat("x", MaxMemberAnswerBytes) + `"}`, "", http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, "/api/pull", nil)
			reply, err := upstream.SendWith(linesDoer(tt.body), req, 0, fanOutLines)
			if tt.code != 0 {
				if he := apierr.From(err); he.Status() != tt.code {
					t.Errorf("fanOutLines(%s) = %v, want %d", tt.name, err, tt.code)
				}
				return
			}
			if err != nil || string(reply.Body) != tt.want {
				t.Errorf("fanOutLines(%s) = %q, %v; want %q", tt.name, reply.Body, err, tt.want)
			}
		})
	}
}

// linesDoer answers every request with a 200 of body, its length unknown.
type linesDoer string

func (d linesDoer) Do(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, ContentLength: -1, Body: io.NopCloser(strings.NewReader(string(d)))}, nil
}
