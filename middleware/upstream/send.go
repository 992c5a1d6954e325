package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"unicode/utf8"

	"github.com/contractgateway/gateway/internal/bufpool"
	"github.com/contractgateway/gateway/middleware/apierr"
)

// Doer sends a request to Ollama: [Client.Do], or whatever stands in for
// it (the guard's Upstream seam, a test's fake).
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Reply is a 2xx answer of the upstream, read whole.
type Reply struct {
	// Header is the answer's header (its Content-Type, for callers that
	// pass the answer on).
	Header http.Header
	// Body is the answer's whole body.
	Body []byte
}

// ErrIncomplete is the cause of the 502 of an answer whose body broke off
// before its end (the connection was cut, or the body was shorter than
// announced).
var ErrIncomplete = errors.New("upstream response incomplete")

// maxErrorBody bounds how much of an upstream error answer is read: its
// message is one line.
const maxErrorBody = 64 << 10

// Send sends req through d and reads the 2xx answer whole, at most limit
// bytes (zero or negative means no limit). Every failure comes back as an
// error of the request path, for apierr.From to map: the upstream's own
// error status and message, an unreachable or cut
// upstream as 502, a too large answer as 502 naming the limit, an upstream
// timeout as 504, and — when req's context ended (the client left, the
// deadline passed) — the context's error, which apierr.From maps to 499
// or 504.
func Send(d Doer, req *http.Request, limit int64) (Reply, error) {
	return SendWith(d, req, limit, readWhole)
}

// readWhole reads an answer whole: Send's reading.
func readWhole(s *Stream) ([]byte, error) { return readAll(s, s.ContentLength) }

// SendWith is [Send] with read reading the answer: what it returns is the
// Reply's Body, its errors are mapped as Send's are.
func SendWith(d Doer, req *http.Request, limit int64, read func(*Stream) ([]byte, error)) (Reply, error) {
	s, err := Open(d, req, limit)
	if err != nil {
		return Reply{}, err
	}
	defer s.Close()
	body, err := read(s)
	var he *apierr.Error
	switch {
	case err == nil:
	case errors.As(err, &he):
		return Reply{}, err
	case req.Context().Err() != nil:
		return Reply{}, apierr.WithContext(req.Context(), err)
	default:
		return Reply{}, &apierr.Error{Code: http.StatusBadGateway, Msg: ErrIncomplete.Error(), Err: fmt.Errorf("%w: %w", ErrIncomplete, err)}
	}
	return Reply{Header: s.Header, Body: body}, nil
}

// ErrTooLarge is the cause of the 502 of an answer over the limit its
// reader set: errors.Is finds it through the *apierr.Error.
var ErrTooLarge = errors.New("upstream response too large")

func TooLarge(limit int64) *apierr.Error {
	return &apierr.Error{Code: http.StatusBadGateway, Msg: fmt.Sprintf("upstream response exceeds %d bytes", limit), Err: ErrTooLarge}
}

// readUnsized reads a body of no announced size (a chunked answer) into a
// reused buffer, then copies it out at its exact size: io.ReadAll would
// grow a buffer by doubling, allocating about three times the body.
func readUnsized(r io.Reader) ([]byte, error) {
	buf := readBuffers.Get()
	var err error
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		n, err = r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	if err != io.EOF {
		// Over the limit, cut short: the caller keeps nothing of it.
		readBuffers.Put(buf)
		return nil, err
	}
	body := append([]byte{}, buf...)
	readBuffers.Put(buf)
	return body, nil
}

// readBuffers holds the buffers of readUnsized: a few per core, at
// most 32, each at most 256 KiB: at most 8 MiB stay allocated, and a rare
// answer larger than that is read as before.
var readBuffers = bufpool.New(min(4*runtime.GOMAXPROCS(0), 32), 256<<10)

// readAll reads r whole, into one buffer of the announced size when there
// is one (answers are tens of kilobytes: growing a buffer from 512 bytes
// would copy them several times). A body shorter than announced is an
// error, as io.ReadAll would have it from the transport.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 || size > 256<<20 {
		return readUnsized(r)
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

// RoundTripError maps the error of a round trip to the client's: the
// client's own body failing is the client's error (400, 408, 413 or the
// client gone), an *apierr.Error (the open breaker's 503) stays as it is,
// the request's context ending stays the context's error for apierr.From
// to map, the upstream's own slowness (upstream_timeout) is 504, and
// anything else an unreachable upstream, 502. The cause — addresses,
// ports, the dialer's words — goes to the log line with the request id;
// the client learns what it can act on.
func RoundTripError(req *http.Request, err error) error {
	var (
		he  *apierr.Error
		mbe *http.MaxBytesError
		ne  net.Error
	)
	if cbe := clientBodyFailure(req, err); cbe != nil {
		return clientBodyAnswer(cbe)
	}
	ctx := req.Context()
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &mbe):
		return err
	case ctx.Err() != nil:
		return apierr.WithContext(ctx, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &apierr.Error{Code: http.StatusGatewayTimeout, Msg: "upstream timed out", Err: err}
	}
	return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream unreachable", Err: err}
}

// StatusError turns an upstream's error answer into the client's: the
// same status and message (Ollama's {"error": …}, or OpenAI's
// {"error": {"message": …}}), and the headers that go with it
// (Retry-After on a 503). It is the one reading of Ollama's error body.
// The message and the body kept for the log are clipped to
// maxLoggedErrorBody: both end up in the request's log line, and an
// upstream (or a proxy in front of it) that answers with a page of tens
// of kilobytes must not make one line of it.
func StatusError(resp *http.Response) *apierr.Error {
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
