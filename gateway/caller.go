package gateway

import (
	"net"
	"net/netip"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// markCaller puts on each request's context who sent it
// (upstream.WithCaller), for the upstream breakers: a 5xx answer counts
// against an upstream only once such answers reached several callers, so
// that one client whose requests Ollama cannot serve (a broken template
// is a 500) cannot open the breaker for every other one. It runs after
// the access check, which names the request's key.
func markCaller(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		c.SetRequest(req.WithContext(upstream.WithCaller(req.Context(), callerOf(c))))
		return next(c)
	}
}

// callerOf names the sender of a request: its API key, or, for a request
// without one (access control off, or the anonymous policy), the address
// it came from — the connection's, never a header the client writes, which
// would let one client pass for many. An IPv6 address counts by its /64,
// the block one host is given.
func callerOf(c echo.Context) string {
	if name := access.KeyName(c); name != "" && name != access.AnonymousName {
		return "key " + name
	}
	addr := c.Request().RemoteAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return "address " + addr
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return "address " + p.String()
	}
	return "address " + ip.String()
}
