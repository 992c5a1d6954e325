package upstream

import (
	"context"
	"sync"
)

type ctxKeyModel struct{}

// WithModel returns ctx saying that the requests made with it ask for
// model m: the guard knows its model and says so, so that a [Pool] routes
// its calls without reading their bodies.
func WithModel(ctx context.Context, m string) context.Context {
	return context.WithValue(ctx, ctxKeyModel{}, m)
}

// ModelFrom returns the model [WithModel] put on ctx, and whether one was.
func ModelFrom(ctx context.Context) (string, bool) {
	m, ok := ctx.Value(ctxKeyModel{}).(string)
	return m, ok
}

type ctxKeyServed struct{}

// served records the upstreams that answered the requests of one client
// request: the log line and the guard's Event name them.
type served struct {
	mu   sync.Mutex
	name string
}

// Track returns ctx with a record of the upstream that answers the
// requests made with it (or with a context derived from it), for
// [Served] to read once the request is done.
func Track(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKeyServed{}, &served{})
}

// Served returns the upstream that answered the last request made with
// ctx, as its URL; "" when none did or ctx is not tracked.
func Served(ctx context.Context) string {
	s, ok := ctx.Value(ctxKeyServed{}).(*served)
	if !ok {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// MarkServed records name as the upstream that answered a request of ctx.
func MarkServed(ctx context.Context, name string) {
	if s, ok := ctx.Value(ctxKeyServed{}).(*served); ok {
		s.mu.Lock()
		s.name = name
		s.mu.Unlock()
	}
}

type ctxKeyAvoid struct{}

// Again returns ctx for a request sent once more because the answer of
// the last one made with ctx broke off: a pool sends it to another
// upstream than the one that gave that answer ([Served]) when another
// has the model. ctx must be tracked ([Track]) for that.
func Again(ctx context.Context) context.Context {
	if s := Served(ctx); s != "" {
		return context.WithValue(ctx, ctxKeyAvoid{}, s)
	}
	return ctx
}

// Avoided is the upstream [Again] put on ctx, or "".
func Avoided(ctx context.Context) string {
	s, _ := ctx.Value(ctxKeyAvoid{}).(string)
	return s
}

type ctxKeyCaller struct{}

// WithCaller returns ctx saying who sent the requests made with it: an
// API key's name, or an anonymous client's address, as the gateway's
// access check knows it. The breaker reads it to tell an upstream that
// is unwell from one client whose requests it cannot serve: Ollama
// answers 500 to a broken template as to a crashed runner, and only the
// spread of such answers over several callers says which it is (see
// [BreakerSettings]).
func WithCaller(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKeyCaller{}, id)
}

// CallerFrom returns the caller [WithCaller] put on ctx, "" for none. A
// request without one is counted as one more caller, the unnamed one.
func CallerFrom(ctx context.Context) string {
	id, _ := ctx.Value(ctxKeyCaller{}).(string)
	return id
}
