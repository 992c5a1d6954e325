package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Values of Event.Cache and the X-Cache header.
const (
	cacheHit    = "hit"
	cacheMiss   = "miss"
	cacheBypass = "bypass"
)

// cacheControl is what the client's Cache-Control allows: no-cache skips
// the read, no-store the write.
type cacheControl struct {
	noRead, noWrite bool
}

func parseCacheControl(h http.Header) cacheControl {
	var cc cacheControl
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "no-cache":
				cc.noRead = true
			case "no-store":
				cc.noWrite = true
			}
		}
	}
	return cc
}

// CacheStore is where the guard keeps validated outputs: the cache
// package's memory, Redis or tiered store. A store error never fails a
// request; it is a miss.
type CacheStore interface {
	Get(ctx context.Context, k cache.Key) ([]byte, bool, error)
	Set(ctx context.Context, k cache.Key, v []byte) error
}

// Cache is the cache stage of the guard: validated outputs by the hash of
// the canonical request (endpoint, contract, its parameters, the output
// form and the upstream body, whatever its key order, whitespace or
// number spelling), and identical requests in flight sharing one upstream
// call and one ladder.
type Cache struct {
	store CacheStore
	group cache.Group[*result]
	// Leases, when its Lease is set, shares runs across replicas too:
	// the replica that takes a key's lease runs it for all.
	cache.Leases
	// SharedAcrossKeys lets callers of different API keys share entries
	// and runs in flight. Off (the default), the caller's key name
	// (WithCaller) is part of the cache key: a hit would otherwise tell
	// one tenant what another asked, and hand it the answer.
	SharedAcrossKeys bool
}

// NewCache returns the cache stage over store.
func NewCache(store CacheStore) *Cache {
	return &Cache{store: store}
}

// Coalesced counts the requests that shared another's upstream call and
// ladder instead of making their own.
func (c *Cache) Coalesced() uint64 { return c.group.Coalesced() }

// answer serves x from the store, or from an identical request in flight,
// or by run; it stores what run made when it is valid.
func (c *Cache) answer(ctx context.Context, x *exchange, run func(context.Context, *exchange, *release.Feed) *result, ev *Event) *result {
	ev.Cache = cacheBypass
	if x.cache.noRead && x.cache.noWrite {
		return run(ctx, x, nil)
	}
	key := x.cacheKey(c.partition(ctx))
	// stored reads key's entry, here and while another replica's run of
	// it holds the lease.
	stored := func(ctx context.Context) (*result, bool) {
		res := c.entry(ctx, key, x)
		return res, res != nil
	}
	if !x.cache.noRead {
		ev.Cache = cacheMiss
		if res, ok := stored(ctx); ok {
			ev.Cache = cacheHit
			return res
		}
	}
	if x.cache.noRead || x.cache.noWrite {
		// This request wants an answer of its own: no sharing either.
		res := run(ctx, x, nil)
		if !x.cache.noWrite && res.storable() {
			c.set(ctx, key, res)
		}
		return res
	}
	// Every request sharing the run follows the feed of the items it
	// releases: those released before it came go out at once, the rest
	// as they come.
	res, shared, err := cache.DoShared(&c.group, ctx, key, release.NewFeed, x.follow, func(ctx context.Context, f *release.Feed) (*result, error) {
		end, res, found := cache.TakeLease(&c.Leases, ctx, key, stored)
		if found {
			return res, nil
		}
		defer end()
		res = run(ctx, x, f)
		if res.storable() {
			c.set(ctx, key, res)
		}
		return res, nil
	})
	if err != nil {
		return &result{err: apierr.From(err)}
	}
	ev.Coalesced = shared
	return res
}

// entry is the stored answer of key that can answer x, or nil.
func (c *Cache) entry(ctx context.Context, key cache.Key, x *exchange) *result {
	v, ok, err := c.store.Get(ctx, key)
	if err != nil || !ok {
		return nil
	}
	// An entry without the corrections a request reports (one written
	// before entries kept them) cannot answer it.
	if res, err := decodeEntry(v); err == nil && (x.report() == "" || res.corrections != nil) {
		return res
	}
	return nil
}

// partition is whose entries a request of ctx may read and write: its
// caller's, or everyone's when entries are shared across keys.
func (c *Cache) partition(ctx context.Context) string {
	if c.SharedAcrossKeys {
		return ""
	}
	return caller(ctx)
}

// cacheKey is the key of x's answer in partition: everything that changes
// its bytes. The body as sent upstream holds the model, the format and the
// options; the route adds the contract, its parameters, and how the
// answer is rendered and reported.
func (x *exchange) cacheKey(partition string) cache.Key {
	return cache.NewKey(cache.Request{Endpoint: x.codec.Path(), Contract: x.route.Validator.Contract.ID(),
		Params: x.route.Params, Output: x.route.OutputMode(), Report: x.report(), Body: x.up.Body, Partition: partition})
}

func (c *Cache) set(ctx context.Context, key cache.Key, res *result) {
	// The answer is made: a client that left meanwhile does not stop it
	// from being kept.
	_ = c.store.Set(context.WithoutCancel(ctx), key, encodeEntry(res))
}

// entry is a stored result: what the encode stage needs to answer again.
// Corrections is the list a request with a corrections report got; it is
// absent from entries of other requests and from entries written before
// it was kept, which still decode.
type entry struct {
	Status      string          `json:"status"`
	Contract    string          `json:"contract"`
	Repairs     int             `json:"repairs"`
	Text        string          `json:"text"`
	Obj         json.RawMessage `json:"obj"`
	Corrections json.RawMessage `json:"corrections,omitempty"`
}

func encodeEntry(res *result) []byte {
	e := entry{Status: res.status, Contract: res.contract, Repairs: res.repairs, Text: res.text,
		Obj: strictjson.Marshal(res.obj)}
	if res.corrections != nil {
		e.Corrections = strictjson.Marshal(res.corrections)
	}
	b, _ := json.Marshal(e)
	return b
}

func decodeEntry(b []byte) (*result, error) {
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	obj, err := strictjson.Parse(e.Obj)
	if err != nil {
		return nil, err
	}
	if obj.Kind != strictjson.KindObject || e.Status == "" {
		return nil, errors.New("cache entry: not an answer")
	}
	res := &result{status: e.Status, contract: e.Contract, repairs: e.Repairs, text: e.Text, obj: obj}
	if e.Corrections != nil {
		list, err := strictjson.Parse(e.Corrections)
		if err != nil {
			return nil, err
		}
		if list.Kind != strictjson.KindArray {
			return nil, errors.New("cache entry: corrections not a list")
		}
		res.corrections = list
	}
	return res, nil
}
