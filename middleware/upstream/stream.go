package upstream

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// Stream is a 2xx answer of the upstream read as it arrives: the guard
// reads its model calls chunk by chunk (to keep a held client alive, to
// stop a model whose JSON value has closed) instead of waiting for the
// whole body. Its reads enforce the same limit and map their failures as
// [Send] does, so that a caller sees the same errors either way.
type Stream struct {
	// Header is the answer's header.
	Header http.Header
	// ContentLength is the answer's announced length, -1 when unknown.
	ContentLength int64

	req    *http.Request
	body   io.ReadCloser
	limit  int64
	read   int64
	frames FrameCounter
}

// Open sends req through d and returns the 2xx answer to read as it
// arrives, at most limit bytes (zero or negative means no limit). Its
// errors are those of [Send]: the upstream's own error status and
// message, an unreachable upstream as 502, an upstream timeout as 504, an
// answer announced larger than limit as 502, and the context's error when
// req's context ended. The caller must Close the Stream.
func Open(d Doer, req *http.Request, limit int64) (*Stream, error) {
	resp, err := d.Do(req)
	if err != nil {
		return nil, RoundTripError(req, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, StatusError(resp)
	}
	if limit > 0 && resp.ContentLength > limit {
		resp.Body.Close()
		return nil, TooLarge(limit)
	}
	return &Stream{Header: resp.Header, ContentLength: resp.ContentLength, req: req, body: resp.Body, limit: limit}, nil
}

// Read reads the next bytes of the answer. It returns io.EOF at the
// answer's end; any other error is one of the request path, for
// apierr.From to map: the context's error once the request's context
// ended (the client left, the deadline passed, the caller stopped the
// call), a 502 for a body cut short, a 502 naming the limit for an answer
// that goes over it.
func (s *Stream) Read(p []byte) (int, error) {
	if s.limit > 0 && int64(len(p)) > s.limit+1-s.read {
		p = p[:s.limit+1-s.read]
	}
	n, err := s.body.Read(p)
	s.read += int64(n)
	s.frames.Write(p[:n])
	if s.limit > 0 && s.read > s.limit {
		return n, TooLarge(s.limit)
	}
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return n, err
	case s.req.Context().Err() != nil:
		return n, apierr.WithContext(s.req.Context(), err)
	}
	return n, &apierr.Error{Code: http.StatusBadGateway, Msg: ErrIncomplete.Error(), Err: fmt.Errorf("%w: %w", ErrIncomplete, err)}
}

// Frames is the number of frames (NDJSON chunks, SSE data events) read so
// far: the output tokens of a call stopped or cut before the final chunk
// that holds Ollama's counters.
func (s *Stream) Frames() int { return s.frames.Frames() }

// DrainTimeout bounds how long [Stream.Drain] reads.
const DrainTimeout = 2 * time.Minute

// Drain reads the rest of an answer the caller has complete, then closes
// it and calls done (which ends the call's context); it gives up after
// DrainTimeout. Cutting the connection instead would save the model's
// remaining tokens, but Ollama (v0.17.4) may then block the model for
// good: its handler stops reading the channel of chunks once the client
// has gone (server/routes.go, streamResponse), while the runner's
// Completion, which holds one of the model's parallel slots, may be
// sending the next chunk on it (ch <- res, with no select on the
// request's context) and never return. Seen on the real Ollama: one
// early stop in 18 left every later request to the model waiting. The
// guard has its answer at once all the same; the rest is read in the
// background, within the caller's limits.
func (s *Stream) Drain(done func()) {
	t := time.AfterFunc(DrainTimeout, done)
	defer t.Stop()
	_, _ = io.Copy(io.Discard, s)
	s.Close()
	done()
}

// Close closes the answer's body. Closing it before its end drops the
// connection: the way to stop a model call early, with its context.
func (s *Stream) Close() error { return s.body.Close() }
