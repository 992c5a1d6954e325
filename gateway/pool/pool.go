package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// DefaultHealthInterval is how often a [Pool] of several upstreams checks
// each one when Options.HealthInterval is zero.
const DefaultHealthInterval = 5 * time.Second

// Member is one upstream of a [Pool].
type Member struct {
	// URL is the Ollama server's base URL. Nil means upstream.DefaultURL.
	URL *url.URL
	// Weight orders members that are otherwise equal for a request: the
	// higher first. Zero means 1.
	Weight int
}

// Options configure a [Pool]. The zero value is a pool of one Ollama
// at upstream.DefaultURL.
type Options struct {
	// Members are the upstreams. Empty means one at upstream.DefaultURL.
	Members []Member

	// Transport is the connection pool every member's requests go
	// through, as [upstream.Options].Transport.
	Transport http.RoundTripper

	// Breaker configures each member's own breaker; an empty Name means
	// the member's host.
	Breaker upstream.BreakerSettings

	// MaxResponseBytes bounds the answers Get and Post read whole, as
	// [upstream.Options].MaxResponseBytes.
	MaxResponseBytes int64

	// HealthInterval is how often each member of a pool of several is
	// asked for its /api/version, /api/tags and /api/ps. Zero means
	// DefaultHealthInterval (5s); negative means never (members are then
	// judged by their breakers alone, and any may have any model). A pool
	// of one is never polled: it behaves as its one [upstream.Client].
	HealthInterval time.Duration

	// Logger receives the members' health changes. Nil means
	// slog.Default().
	Logger *slog.Logger

	// RequestModel reads the model a pass-through request names, calling
	// body for its body when the endpoint's body names models (the
	// gateway passes access.RequestModel, the access check's reading).
	// Nil means requests without a model on their context name none, and
	// go to any healthy member.
	RequestModel func(method, path string, body func() ([]byte, error)) (string, error)
}

// Pool is the gateway's one road to several Ollama servers, shown to
// clients as one Ollama. It has the methods of a [upstream.Client] — it is the
// pass-through's http.RoundTripper and the guard's [upstream.Doer] — and sends each
// request to the member best placed to answer it: a healthy member that
// has the request's model, one that has it loaded first, then the one
// with fewest requests in flight, then the heavier. A request that fails
// before any byte of its answer came back goes to the next member, each
// at most once. Listings are unions, model management reaches every
// member (see [Pool.RoundTrip]).
//
// A Pool of one member is that member's upstream.Client and nothing more: same
// answers, same errors, no health checks.
type Pool struct {
	members  []*member
	modelOf  func(method, path string, body func() ([]byte, error)) (string, error)
	maxResp  int64
	interval time.Duration
	log      *slog.Logger
	turn     atomic.Uint64

	startOnce sync.Once
	stopLoop  context.CancelFunc
	loopDone  chan struct{}
	closeOnce sync.Once

	refreshMu sync.Mutex
	lastCheck atomic.Int64 // unix nanoseconds of the last completed check round
}

var (
	_ http.RoundTripper = (*Pool)(nil)
	_ upstream.Doer     = (*Pool)(nil)
)

// member is one upstream of a Pool: its client (whose breaker is replaced
// when a health check brings it back), its counters and its last health.
type member struct {
	name     string
	base     *url.URL
	weight   int
	opts     upstream.Options
	client   atomic.Pointer[upstream.Client]
	inflight atomic.Int64
	requests atomic.Uint64
	failures atomic.Uint64
	// oversize is set while the member's answers go over
	// MaxMemberAnswerBytes: their log line is written once.
	oversize atomic.Bool

	mu sync.Mutex
	h  health
}

// New returns a Pool configured by opts. It starts nothing: the
// health checks of a pool of several begin with its first request.
func New(opts Options) *Pool {
	p := &Pool{modelOf: opts.RequestModel, maxResp: opts.MaxResponseBytes, interval: opts.HealthInterval, log: opts.Logger, loopDone: make(chan struct{})}
	if p.interval == 0 {
		p.interval = DefaultHealthInterval
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.maxResp == 0 {
		p.maxResp = upstream.DefaultMaxResponseBytes
	}
	list := opts.Members
	if len(list) == 0 {
		list = []Member{{}}
	}
	for _, pm := range list {
		u := pm.URL
		if u == nil {
			u, _ = url.Parse(upstream.DefaultURL)
		}
		w := max(pm.Weight, 1)
		m := &member{name: u.String(), base: u, weight: w,
			opts: upstream.Options{URL: u, Transport: opts.Transport, Breaker: opts.Breaker, MaxResponseBytes: opts.MaxResponseBytes}}
		m.h.healthy = true
		m.client.Store(upstream.New(m.opts))
		p.members = append(p.members, m)
	}
	return p
}

// start begins the health checks of a pool of several, once.
func (p *Pool) start() {
	p.startOnce.Do(func() {
		if len(p.members) < 2 || p.interval < 0 {
			close(p.loopDone)
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		p.stopLoop = cancel
		go p.loop(ctx)
	})
}

// Close stops the health checks and closes idle connections. The Pool
// still answers afterwards, as if its checks were off.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		p.startOnce.Do(func() { close(p.loopDone) })
		if p.stopLoop != nil {
			p.stopLoop()
		}
		<-p.loopDone
	})
	p.CloseIdleConnections()
}

// RoundTrip implements http.RoundTripper, as [upstream.Client.RoundTrip] does for
// one upstream. With several members, the request's model — the one
// [WithModel] put on its context, else the one its path or body names
// (the body is then read and kept, so that it can be sent again) — picks
// the member: no member has it is a 404 in Ollama's shape, every member
// that has it down a 503. A round trip that fails (refused, reset, 5xx,
// breaker open) before any byte of the answer came back goes to the next
// member that has the model. Requests that name no model go to the best
// healthy member, with the same failover, except these, which answer as
// one Ollama would: GET /api/tags, /api/ps and /v1/models list every
// member's models once; GET /api/version is the lowest member's; POST
// /api/pull, /api/create, /api/copy and DELETE /api/delete reach every
// member, and answer which failed.
func (p *Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	p.start()
	if len(p.members) == 1 {
		return p.members[0].roundTrip(req)
	}
	if kind := aggregateOf(req.Method, req.URL.Path); kind != aggNone {
		return p.aggregate(req, kind)
	}
	if isBlob(req.URL.Path) {
		return p.blob(req)
	}
	model, known := upstream.ModelFrom(req.Context())
	if !known {
		var err error
		if model, req, err = p.readModel(req); err != nil {
			return nil, err
		}
	}
	if kind := fanOutOf(req.Method, req.URL.Path); kind != "" {
		return p.fanOut(req, kind)
	}
	return p.route(req, model)
}

// Do is RoundTrip, for callers that read the answer themselves.
func (p *Pool) Do(req *http.Request) (*http.Response, error) { return p.RoundTrip(req) }

// Get asks path of the pool and returns its 2xx answer read whole, as
// [upstream.Client.Get] does.
func (p *Pool) Get(ctx context.Context, path string, header http.Header) (upstream.Reply, error) {
	return p.call(ctx, http.MethodGet, path, nil, header)
}

// Post sends body, JSON, to path and returns its 2xx answer read whole,
// as [upstream.Client.Post] does.
func (p *Pool) Post(ctx context.Context, path string, body []byte, header http.Header) (upstream.Reply, error) {
	return p.call(ctx, http.MethodPost, path, body, header)
}

func (p *Pool) call(ctx context.Context, method, path string, body []byte, header http.Header) (upstream.Reply, error) {
	return upstream.SendWhole(ctx, p, method, path, body, header, p.maxResp)
}

// State is the breaker state of the pool as a whole: open when every
// member's breaker is (every model call would fail at once), closed when
// any member's is, half-open otherwise.
func (p *Pool) State() gobreaker.State {
	st := gobreaker.StateOpen
	for _, m := range p.members {
		switch m.client.Load().State() {
		case gobreaker.StateClosed:
			return gobreaker.StateClosed
		case gobreaker.StateHalfOpen:
			st = gobreaker.StateHalfOpen
		}
	}
	return st
}

// Failover reports whether a failed request can go to another upstream:
// whether the pool has several. The guard sends a call whose answer broke
// off once more only then, so that a pool of one behaves as its upstream.Client.
func (p *Pool) Failover() bool { return len(p.members) > 1 }

// Breaker returns the first member's breaker: a pool of one's only one.
func (p *Pool) Breaker() *upstream.BreakerTransport { return p.members[0].client.Load().Breaker() }

// CloseIdleConnections closes every member's idle connections.
func (p *Pool) CloseIdleConnections() {
	for _, m := range p.members {
		m.client.Load().CloseIdleConnections()
	}
}

// readModel reads the model a request names with RequestModel. A body it
// reads is read whole (the gateway already bounds it by max_body_bytes)
// and kept, so that the request can be sent again to another member.
func (p *Pool) readModel(req *http.Request) (string, *http.Request, error) {
	if p.modelOf == nil {
		return "", req, nil
	}
	out := req
	model, err := p.modelOf(req.Method, req.URL.Path, func() ([]byte, error) {
		if req.Body == nil || req.Body == http.NoBody {
			return nil, nil
		}
		raw, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) || req.Context().Err() != nil {
				return nil, upstream.RoundTripError(req, err)
			}
			return nil, upstream.ClientBodyAnswer(err)
		}
		out = new(http.Request)
		*out = *req
		out.Body = io.NopCloser(bytes.NewReader(raw))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
		out.ContentLength = int64(len(raw))
		out.TransferEncoding = nil
		return raw, nil
	})
	if err != nil {
		return "", nil, err
	}
	return model, out, nil
}

// candidates snapshots what the choice needs of every member.
func (p *Pool) candidates(model string) []candidate {
	key := upstream.ModelKey(model)
	cs := make([]candidate, len(p.members))
	for i, m := range p.members {
		m.mu.Lock()
		cs[i] = candidate{Known: m.h.models != nil, Healthy: m.h.healthy,
			Has: m.h.models[key], Loaded: m.h.loaded[key], Weight: m.weight}
		m.mu.Unlock()
		cs[i].Open = m.client.Load().State() == gobreaker.StateOpen
		cs[i].InFlight = m.inflight.Load()
	}
	return cs
}

// plan chooses the members to try for model. A model no member has may
// have been pulled since the last check: the members are asked again
// (at most once a second) before the answer is a 404.
func (p *Pool) plan(ctx context.Context, model string) ([]int, error) {
	order, v := choose(p.candidates(model), model, p.turn.Add(1)-1)
	if v == notFound && p.interval >= 0 && p.refresh(ctx) {
		order, v = choose(p.candidates(model), model, p.turn.Add(1)-1)
	}
	switch v {
	case notFound:
		return nil, &apierr.Error{Code: http.StatusNotFound, Msg: fmt.Sprintf("model %q not found", model)}
	case allDown:
		return nil, &apierr.Error{Code: http.StatusServiceUnavailable,
			Msg: fmt.Sprintf("every upstream that has model %q is down; retry later", model)}
	}
	return order, nil
}

// route sends req to the members chosen for model, the next one after a
// failure that reached no client, each at most once.
func (p *Pool) route(req *http.Request, model string) (*http.Response, error) {
	order, err := p.plan(req.Context(), model)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if avoid := upstream.Avoided(req.Context()); avoid != "" {
		// The upstream whose answer broke off goes last.
		slices.SortStableFunc(order, func(a, b int) int {
			return cmpBool(p.members[a].name == avoid, p.members[b].name == avoid)
		})
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	var last error
	for n, i := range order {
		out := req
		if n > 0 {
			if !replayable {
				break
			}
			if out, err = again(req); err != nil {
				break
			}
		}
		resp, err := p.members[i].roundTrip(out)
		more := replayable && n < len(order)-1
		switch {
		case err == nil && (resp.StatusCode < 500 || !more):
			return resp, nil
		case err == nil:
			// A 5xx with another member to ask: its body is dropped.
			last = upstream.StatusError(resp)
			resp.Body.Close()
		case !retryable(req, err):
			return nil, err
		default:
			last = err
		}
	}
	return nil, last
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// again is req with its body from the start.
func again(req *http.Request) (*http.Request, error) {
	out := new(http.Request)
	*out = *req
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = b
	}
	return out, nil
}

// retryable reports whether a failed round trip may go to another member:
// the upstream's failure (5xx: unreachable, timed out, breaker open), not
// the client's (its body, its leaving).
func retryable(req *http.Request, err error) bool {
	var he *apierr.Error
	return req.Context().Err() == nil && errors.As(err, &he) && he.Code >= 500
}

// roundTrip sends req to the member, counting it in flight until its
// answer's body is closed.
func (m *member) roundTrip(req *http.Request) (*http.Response, error) {
	m.requests.Add(1)
	m.inflight.Add(1)
	resp, err := m.client.Load().RoundTrip(req)
	var he *apierr.Error
	if (err != nil && errors.As(err, &he) && he.Code >= 500 && req.Context().Err() == nil) || (err == nil && resp.StatusCode >= 500) {
		m.failures.Add(1)
	}
	if err != nil {
		m.inflight.Add(-1)
		return nil, err
	}
	upstream.MarkServed(req.Context(), m.name)
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The proxy needs the upgraded body as it is (writable).
		m.inflight.Add(-1)
		return resp, nil
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { m.inflight.Add(-1) }}
	return resp, nil
}

// countedBody calls done once, when the answer's body is closed.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
