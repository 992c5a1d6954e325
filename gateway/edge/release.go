package edge

import (
	"io"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Large request bodies and what becomes of their memory.
//
// A guarded request holds its whole body, the parsed copy and the body it
// sends upstream: four parallel 20 MB chats grow the heap by gigabytes,
// nearly all of it garbage once they are answered. Go collects garbage
// when allocation goes on; an idle gateway allocates next to nothing, so
// that heap is kept until the runtime's forced collection two minutes
// later, and its pages go back to the system slowly after that. The
// gateway therefore collects and returns the memory itself once a burst
// of large bodies is over.
const (
	// largeBody is the request body size from which a request counts as
	// large: well above any ordinary prompt, far below what the default
	// body limit admits.
	largeBody = 4 << 20

	// releaseQuiet is how long after the last large request the memory is
	// released: a burst costs one collection, not one per request.
	releaseQuiet = time.Second
)

// HeapReleaser collects the heap and returns it to the system once no
// large request has ended for its quiet time.
type HeapReleaser struct {
	threshold int64
	quiet     time.Duration
	release   func() // debug.FreeOSMemory, or a test's counter

	mu    sync.Mutex
	timer *time.Timer
}

// NewHeapReleaser returns a HeapReleaser that releases with
// debug.FreeOSMemory a second after the last request of 4 MiB or more.
func NewHeapReleaser() *HeapReleaser {
	return &HeapReleaser{threshold: largeBody, quiet: releaseQuiet, release: debug.FreeOSMemory}
}

// ended notes that a request that read n body bytes has ended, and
// (re)arms the release when n is large.
func (h *HeapReleaser) ended(n int64) {
	if n < h.threshold {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil {
		h.timer.Reset(h.quiet)
		return
	}
	h.timer = time.AfterFunc(h.quiet, h.fire)
}

func (h *HeapReleaser) fire() {
	h.mu.Lock()
	h.timer = nil
	release := h.release
	h.mu.Unlock()
	release()
}

// Stop cancels a pending release (the server is closing).
func (h *HeapReleaser) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
}

// Middleware counts the body bytes each request reads, whoever reads them
// (guard, proxy, model routes), and reports them when the request ends.
func (h *HeapReleaser) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		cb := &countedBody{ReadCloser: req.Body}
		req.Body = cb
		defer func() { h.ended(cb.n) }()
		return next(c)
	}
}

// countedBody counts the bytes read from a request body.
type countedBody struct {
	io.ReadCloser
	n int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}
