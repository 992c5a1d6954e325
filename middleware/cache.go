package middleware

import (
	"context"
	"net/http"
	"strings"
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

// Cache is the cache of validated outputs.
type Cache struct{}

func (c *Cache) answer(ctx context.Context, x *exchange, run func(context.Context, *exchange) *result, ev *Event) *result {
	return run(ctx, x)
}
