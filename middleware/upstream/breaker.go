package upstream

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// ErrCircuitOpen is the cause of the 503 [BreakerTransport] answers,
// without calling the upstream, while the breaker is open (or half-open
// with its trial requests in flight). errors.Is finds it through the
// *apierr.Error.
var ErrCircuitOpen = errors.New("upstream circuit open")

// Breaker defaults; the zero value of each [BreakerSettings] field means
// the matching default.
const (
	DefaultFailureThreshold    = 5
	DefaultOpenTimeout         = 30 * time.Second
	DefaultHalfOpenMaxRequests = 1
)

// CallerWindow is how long a caller's 5xx answer is remembered by the
// breaker: a 5xx counts as a failure when another caller got one within
// this time, with no answer below 500 in between. A minute holds a few
// requests of every active client, and forgets a 5xx of long ago that
// would let one client's 5xx count again.
const CallerWindow = time.Minute

// BreakerSettings configures a [BreakerTransport]. The zero value is
// usable: every zero field means its documented default.
type BreakerSettings struct {
	// Name labels the breaker in logs. Empty means "upstream".
	Name string

	// FailureThreshold is the number of consecutive failed round trips
	// that opens the breaker. A failure is a transport error (refused
	// connection, reset, response header timeout), a 502 or 504 (never
	// Ollama's own answers: a proxy in front of it could not reach it, or
	// waited too long, as a transport error says), or another 5xx
	// response once 5xx responses have come to at least two callers
	// ([WithCaller]: API keys, anonymous clients' addresses) within
	// [CallerWindow] and without an answer below 500 since. Another 5xx
	// to one caller alone is neither a success nor a failure: Ollama
	// (v0.17.4, server/routes.go) answers 500 to what a request holds (a
	// template that does not parse, a prompt it cannot render) as to its
	// own trouble (a runner that stopped), and 503 to a full queue that
	// one client's flood fills; counted, one client could open the
	// breaker for every other one. A request whose own context ended (the client left,
	// the gateway's deadline for it ran out), or whose body was over its
	// limit or could not be read from the client (malformed chunked
	// framing, shorter than announced), is neither either. Default 5;
	// zero means the default.
	FailureThreshold int

	// OpenTimeout is how long the breaker stays open, failing round trips
	// at once with ErrCircuitOpen, before it turns half-open. Default 30s;
	// zero means the default.
	OpenTimeout time.Duration

	// HalfOpenMaxRequests is the number of trial round trips let through
	// while half-open; others get ErrCircuitOpen. That many successes in a
	// row close the breaker; one failure opens it again. Default 1; zero
	// means the default.
	HalfOpenMaxRequests int

	// OnStateChange, when not nil, is called on every transition. It runs
	// with the breaker's lock held: it must not call the transport's State
	// or RoundTrip, and should return quickly (log, count).
	OnStateChange func(name string, from, to gobreaker.State)
}

// BreakerTransport is an http.RoundTripper that counts the outcomes of the
// round trips of its base transport and, after too many consecutive
// failures, fails new ones at once for a while — with a 503
// *apierr.Error that carries Retry-After and wraps [ErrCircuitOpen] — so
// that a dead upstream costs clients nothing and is not hammered.
//
// Only the round trip counts (up to the response headers): a stream that
// breaks later does not. The response of a 5xx round trip is returned to
// the caller unchanged; it only counts as a failure, and, but for a 502
// or 504, only when 5xx answers reached several callers (see
// [BreakerSettings]). Other errors of the
// base transport are returned as they are: [Client] maps them.
type BreakerTransport struct {
	base        http.RoundTripper
	cb          *gobreaker.TwoStepCircuitBreaker[struct{}]
	openTimeout time.Duration
	openedAt    atomic.Int64 // unix nanoseconds of the last transition to open
	spread      spread
}

// spread remembers the callers that got a 5xx answer since the last
// answer below 500, each with the time of its last one: the breaker
// counts a 5xx only once it has reached two callers.
type spread struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// fiveXX records a 5xx answer to caller at now and reports whether 5xx
// answers reached at least two callers within CallerWindow.
func (s *spread) fiveXX(caller string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]time.Time{}
	}
	for c, at := range s.last {
		if now.Sub(at) > CallerWindow {
			delete(s.last, c)
		}
	}
	s.last[caller] = now
	return len(s.last) >= 2
}

// ok forgets the callers: the upstream answered below 500.
func (s *spread) ok() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.last)
}

var _ http.RoundTripper = (*BreakerTransport)(nil)

// errExcluded marks an outcome that says nothing about the upstream's
// health; IsExcluded matches it.
var errExcluded = errors.New("excluded from breaker counts")

// errStatus5xx is the failure recorded for a 5xx response once 5xx
// responses reached several callers.
var errStatus5xx = errors.New("upstream 5xx response")

// errStatusProxy is the failure recorded for a 502 or 504: a proxy in
// front of the upstream could not reach it, or waited too long for it.
var errStatusProxy = errors.New("upstream unreachable behind a proxy (502, 504)")

// errOneCaller is the outcome of a 5xx response while 5xx responses have
// reached one caller only: excluded, as it may be that caller's doing.
var errOneCaller = fmt.Errorf("%w: upstream 5xx responses to one caller only", errExcluded)

// NewBreakerTransport wraps base (nil means http.DefaultTransport) with a
// circuit breaker configured by settings.
func NewBreakerTransport(base http.RoundTripper, settings BreakerSettings) *BreakerTransport {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &BreakerTransport{base: base, openTimeout: settings.OpenTimeout}
	if t.openTimeout <= 0 {
		t.openTimeout = DefaultOpenTimeout
	}
	threshold := uint32(DefaultFailureThreshold)
	if settings.FailureThreshold > 0 {
		threshold = uint32(settings.FailureThreshold)
	}
	halfOpen := uint32(DefaultHalfOpenMaxRequests)
	if settings.HalfOpenMaxRequests > 0 {
		halfOpen = uint32(settings.HalfOpenMaxRequests)
	}
	name := settings.Name
	if name == "" {
		name = "upstream"
	}
	onChange := settings.OnStateChange
	t.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: halfOpen,
		Timeout:     t.openTimeout,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= threshold },
		IsExcluded:  func(err error) bool { return errors.Is(err, errExcluded) },
		OnStateChange: func(name string, from, to gobreaker.State) {
			// The breaker's lock is held here: touch only our own fields.
			if to == gobreaker.StateOpen {
				t.openedAt.Store(time.Now().UnixNano())
			}
			if onChange != nil {
				onChange(name, from, to)
			}
		},
	})
	return t
}

// RoundTrip implements http.RoundTripper.
func (t *BreakerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	done, err := t.cb.Allow()
	if err != nil {
		// A RoundTripper must close the body, even when it sends nothing.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, openError(t.RetryAfter())
	}
	resp, err := t.base.RoundTrip(req)
	done(t.outcome(req, resp, err))
	return resp, err
}

// outcome classifies a round trip for the breaker (see [outcome]), a 5xx
// counting only once 5xx answers reached two callers.
func (t *BreakerTransport) outcome(req *http.Request, resp *http.Response, err error) error {
	o := outcome(req, resp, err)
	switch {
	case o == nil:
		t.spread.ok()
	case o == errStatus5xx && !t.spread.fiveXX(CallerFrom(req.Context()), time.Now()):
		return errOneCaller
	}
	return o
}

// circuitOpenError is ErrCircuitOpen with the time left before the next
// trial request.
type circuitOpenError struct {
	retryAfter time.Duration
}

func (e *circuitOpenError) Error() string {
	return fmt.Sprintf("%v: the upstream failed repeatedly; retry after %s", ErrCircuitOpen, e.retryAfter.Round(time.Second))
}

func (e *circuitOpenError) Is(target error) bool { return target == ErrCircuitOpen }

// openError is the client's answer while the breaker is open: 503, and
// Retry-After in whole seconds so that well-behaved clients wait out the
// open timeout instead of retrying at once.
func openError(retryAfter time.Duration) *apierr.Error {
	coe := &circuitOpenError{retryAfter: retryAfter}
	secs := int(retryAfter.Round(time.Second) / time.Second)
	return &apierr.Error{Code: http.StatusServiceUnavailable, Msg: coe.Error(), Err: coe,
		Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}
}

// outcome classifies a round trip for the breaker.
func outcome(req *http.Request, resp *http.Response, err error) error {
	var mbe *http.MaxBytesError
	if cbe := clientBodyFailure(req, err); cbe != nil {
		// The client's body broke (malformed framing, short, cut): the
		// upstream never got the request whole, and whatever it did says
		// nothing of its health. Counted, any client could open the
		// breaker for every other one with a few bad bodies.
		return fmt.Errorf("%w: %w", errExcluded, cbe)
	}
	switch {
	case err == nil && (resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusGatewayTimeout):
		return errStatusProxy
	case err == nil && resp.StatusCode >= 500:
		return errStatus5xx
	case err == nil:
		return nil
	case req.Context().Err() != nil, errors.As(err, &mbe):
		// The client left, the gateway's own deadline for the request ran
		// out, or the client sent too much: none is the upstream's fault.
		// A slow but healthy upstream must not open the breaker for every
		// client; upstream_timeout (the transport's own timeout) counts.
		return fmt.Errorf("%w: %w", errExcluded, err)
	}
	return err
}

// State returns the breaker's state. Do not call it from OnStateChange.
func (t *BreakerTransport) State() gobreaker.State { return t.cb.State() }

// RetryAfter estimates how long the breaker stays open: the rest of
// OpenTimeout since it opened, at least one second.
func (t *BreakerTransport) RetryAfter() time.Duration {
	left := t.openTimeout - time.Since(time.Unix(0, t.openedAt.Load()))
	return max(left, time.Second)
}

// CloseIdleConnections closes the idle connections of the base transport,
// so that http.Client.CloseIdleConnections reaches through the breaker.
func (t *BreakerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
