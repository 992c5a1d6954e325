package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// clientBody is a client's request body on its way to the upstream (the
// pass-through streams it as it arrives). It keeps the first error of
// reading it, so that a round trip that failed because of the client's
// body (malformed chunked framing, a body shorter than announced, a
// client that stopped sending or left) is answered as the client's error
// and never counted against the upstream, which did not even get the
// request whole. The transport returns such an error as the round trip's,
// but may report a cancellation instead when the same read also ended the
// request's context (a client that half-closes after a short body), hence
// the record.
//
// It also answers io.EOF once it has returned it, without reading the
// underlying body again. After sending Content-Length bytes, the upstream
// transport reads the body once more to check that it is not longer. By
// then the upstream may have answered and the proxy written the response
// headers, at which point an HTTP/1 server closes the request body; the
// late read then fails, the transport drops the upstream connection and a
// stream already on its way is cut (golang/go#40747). A read after the
// server closed the body is also taken as its end: the server only does
// so once it has consumed it. (ResponseController.EnableFullDuplex avoids
// the close, but with it net/http panics with "invalid concurrent
// Body.Read call" on the next request of a connection whose upstream was
// unreachable.)
type clientBody struct {
	io.ReadCloser
	eof bool
	// failed is read by the caller's goroutine while the transport's
	// goroutine may still be reading the body.
	failed atomic.Pointer[clientBodyError]
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case err == io.EOF || errors.Is(err, http.ErrBodyReadAfterClose):
		b.eof, err = true, io.EOF
	default:
		cbe := &clientBodyError{err: err}
		b.failed.CompareAndSwap(nil, cbe)
		err = cbe
	}
	return n, err
}

// clientBodyError is an error reading the client's request body: the
// client's doing, never the upstream's.
type clientBodyError struct{ err error }

func (e *clientBodyError) Error() string {
	return "reading the client's request body: " + e.err.Error()
}
func (e *clientBodyError) Unwrap() error { return e.err }

// clientBodyFailure returns the error of reading req's client body, as
// the round trip's err says or as the body recorded it; nil when the body
// was read without error (or is not a client's).
func clientBodyFailure(req *http.Request, err error) *clientBodyError {
	var cbe *clientBodyError
	if errors.As(err, &cbe) {
		return cbe
	}
	if b, ok := req.Body.(*clientBody); ok {
		return b.failed.Load()
	}
	return nil
}

// clientBodyAnswer maps an error of reading the client's body to the
// client's answer, as the guard answers the same body on its routes
// (apierr.BodyRead): 413 over the limit, 408 when it stopped sending, 400
// for malformed framing or a body shorter than announced — even when that
// short read also ended the request's context, since a client that
// half-closed is still waiting for the answer. A connection that broke
// (reset) is the client gone: its request is cancelled, which apierr.From
// answers as 499, logged and not sent.
func clientBodyAnswer(cbe *clientBodyError) error {
	var ne net.Error
	if errors.As(cbe.err, &ne) && !ne.Timeout() {
		return fmt.Errorf("%w: the client's connection broke: %w", context.Canceled, cbe)
	}
	return apierr.BodyRead(cbe)
}

// ClientBodyAnswer is [clientBodyAnswer] for a round trip that failed
// reading the client's body before it reached a Client: a pool that reads
// the body to learn the model answers that failure as the client's.
func ClientBodyAnswer(err error) error { return clientBodyAnswer(&clientBodyError{err: err}) }
