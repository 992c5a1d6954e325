package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
)

// Upstream is the guard's one road to Ollama: the first answer, repair
// calls, partial regeneration, re-runs and the fallback model all go
// through it. The gateway implements it on its breaker transport; an
// embedding application can use [NewUpstream].
type Upstream interface {
	// Do sends req to Ollama and returns its answer. req.URL holds the path
	// only: the Upstream knows where Ollama is. An error the client should
	// see as it is (a 503 of an open breaker, with Retry-After) is an
	// *apierr.Error; any other error is taken as the upstream being
	// unreachable.
	Do(req *http.Request) (*http.Response, error)
}

// NewUpstream returns an Upstream that sends requests to base through rt
// (nil means http.DefaultTransport).
func NewUpstream(base *url.URL, rt http.RoundTripper) Upstream {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &httpUpstream{base: base, rt: rt}
}

type httpUpstream struct {
	base *url.URL
	rt   http.RoundTripper
}

func (u *httpUpstream) Do(req *http.Request) (*http.Response, error) {
	ResolveURL(req, u.base)
	return u.rt.RoundTrip(req)
}

// ResolveURL points req, whose URL holds a path only, at base: scheme,
// host, and base's path as a prefix. The Host header becomes base's host,
// as Ollama refuses other hosts when it listens on loopback.
func ResolveURL(req *http.Request, base *url.URL) {
	u := *base
	u.Path = singleJoin(base.Path, req.URL.Path)
	u.RawPath = ""
	u.RawQuery = req.URL.RawQuery
	req.URL = &u
	req.Host = u.Host
}

func singleJoin(a, b string) string {
	switch {
	case a == "" || a == "/":
		return b
	case a[len(a)-1] == '/' && len(b) > 0 && b[0] == '/':
		return a + b[1:]
	}
	return a + b
}

// upstreamCall is one request the guard sends upstream.
type upstreamCall struct {
	path string
	body []byte
	// header holds the client's headers to forward (nil for the guard's
	// own calls) and the request id.
	header http.Header
}

// maxErrorBody bounds how much of an upstream error answer is read: its
// message is one line.
const maxErrorBody = 64 << 10

// send makes one upstream call and returns the answer's body. Every
// failure comes back as an *apierr.Error: the upstream's own error status
// and message, an unreachable or cut upstream as 502, a too large answer
// as 502 naming the limit, the request's deadline as 504, the client
// leaving as 499.
func (g *guard) send(ctx context.Context, call upstreamCall) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.path, bytes.NewReader(call.body))
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusInternalServerError, Err: err}
	}
	for k, vs := range call.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	g.inject(ctx, req.Header)
	req.ContentLength = int64(len(call.body))
	resp, err := g.Upstream.Do(req)
	if err != nil {
		return nil, upstreamFailure(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, upstreamStatus(resp)
	}
	limit := g.MaxResponseBytes
	if limit > 0 && resp.ContentLength > limit {
		return nil, &apierr.Error{Code: http.StatusBadGateway, Msg: fmt.Sprintf("upstream response exceeds %d bytes", limit)}
	}
	var r io.Reader = resp.Body
	if limit > 0 {
		r = io.LimitReader(resp.Body, limit+1)
	}
	body, err := readAll(r, resp.ContentLength)
	if err != nil {
		if ctx.Err() != nil {
			return nil, upstreamFailure(ctx, err)
		}
		return nil, &apierr.Error{Code: http.StatusBadGateway, Msg: codec.ErrIncomplete.Error(), Err: err}
	}
	if limit > 0 && int64(len(body)) > limit {
		return nil, &apierr.Error{Code: http.StatusBadGateway, Msg: fmt.Sprintf("upstream response exceeds %d bytes", limit)}
	}
	return body, nil
}

// readAll reads r whole, into one buffer of the announced size when there
// is one (answers are tens of kilobytes: growing a buffer from 512 bytes
// would copy them several times). A body shorter than announced is an
// error, as io.ReadAll would have it from the transport.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > 256<<20 {
		return io.ReadAll(r)
	}
	buf := make([]byte, size+1)
	n, err := io.ReadFull(r, buf)
	switch {
	case err == io.ErrUnexpectedEOF && int64(n) == size:
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(r)
	return append(buf[:n], rest...), err
}

// upstreamFailure maps an error of a round trip, or of reading its
// answer: the client leaving or the deadline passing stays the context's
// error for apierr.From to map; anything else is an unreachable upstream.
func upstreamFailure(ctx context.Context, err error) error {
	var he *apierr.Error
	switch {
	case errors.As(err, &he):
		return he
	case ctx.Err() != nil:
		return apierr.WithContext(ctx, err)
	}
	return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream unreachable", Err: err}
}

// upstreamStatus turns an upstream's error answer into the client's: the
// same status and message (Ollama's {"error": …}, or OpenAI's
// {"error": {"message": …}}), and the headers that go with it
// (Retry-After on a 503). The message and the body kept for the log are
// clipped to maxLoggedErrorBody: both end up in the request's log line,
// and an upstream (or a proxy in front of it) that answers with a page of
// tens of kilobytes must not make one line of it.
func upstreamStatus(resp *http.Response) *apierr.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	more := len(body) > maxErrorBody
	body = body[:min(len(body), maxErrorBody)]
	he := &apierr.Error{Code: resp.StatusCode,
		Err: fmt.Errorf("upstream status %d: %s", resp.StatusCode, clip(bytes.TrimSpace(body), maxLoggedErrorBody, more))}
	var native struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &native) == nil && native.Error != nil {
		var s string
		var oai struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(native.Error, &s) == nil:
			he.Msg = clip([]byte(s), maxLoggedErrorBody, false)
		case json.Unmarshal(native.Error, &oai) == nil:
			he.Msg = clip([]byte(oai.Message), maxLoggedErrorBody, false)
		}
	}
	if he.Msg == "" {
		he.Msg = "upstream answered " + strconv.Itoa(resp.StatusCode)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		he.Header = http.Header{"Retry-After": {ra}}
	}
	return he
}

// maxLoggedErrorBody bounds how much of an upstream's error body, and of
// the message in it, is kept, in bytes. Ollama's messages are one short
// line; the rest of a longer body is counted, not kept.
const maxLoggedErrorBody = 512

// clip returns b whole when it is at most n bytes long, else its first n
// bytes (cut back to a UTF-8 boundary) and the count of the bytes left
// out; more says that the body went on past b, unread.
func clip(b []byte, n int, more bool) string {
	if len(b) <= n && !more {
		return string(b)
	}
	cut := min(n, len(b))
	for cut > 0 && cut < len(b) && !utf8.RuneStart(b[cut]) {
		cut--
	}
	plus := ""
	if more {
		plus = "+"
	}
	return fmt.Sprintf("%s… (%d%s bytes left out)", b[:cut], len(b)-cut, plus)
}
