package edge

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// This file keeps Ollama's two browser defences at the gateway's edge, as
// Ollama v0.17.4 applies them to every route (server/routes.go,
// GenerateRoutes): its CORS middleware (gin-contrib/cors configured from
// OLLAMA_ORIGINS) and then allowedHostsMiddleware, the DNS-rebinding
// defence of CVE-2024-28224. The gateway rewrites Host to the upstream's
// and the guard builds its own upstream requests, so Ollama can no longer
// see what the browser sent: without these checks a page on any domain
// that rebinds to 127.0.0.1 would reach Ollama through the gateway.

// defaultOrigins are the origins Ollama allows besides OLLAMA_ORIGINS
// (envconfig.AllowedOrigins).
var defaultOrigins = func() []string {
	var o []string
	for _, h := range []string{"localhost", "127.0.0.1", "0.0.0.0"} {
		o = append(o,
			"http://"+h,
			"https://"+h,
			"http://"+net.JoinHostPort(h, "*"),
			"https://"+net.JoinHostPort(h, "*"),
		)
	}
	return append(o, "app://*", "file://*", "tauri://*", "vscode-webview://*", "vscode-file://*")
}()

// corsAllowHeaders are the request headers a cross-origin page may send:
// Ollama's list (its OpenAI client headers included), then the gateway's
// own request headers, which a page allowed to call the gateway needs to
// choose a contract.
var corsAllowHeaders = []string{
	"Authorization",
	"Content-Type",
	"User-Agent",
	"Accept",
	"X-Requested-With",
	"OpenAI-Beta",
	"x-stainless-arch",
	"x-stainless-async",
	"x-stainless-custom-poll-interval",
	"x-stainless-helper-method",
	"x-stainless-lang",
	"x-stainless-os",
	"x-stainless-package-version",
	"x-stainless-poll-helper",
	"x-stainless-retry-count",
	"x-stainless-runtime",
	"x-stainless-runtime-version",
	"x-stainless-timeout",

	"Cache-Control",
	"X-Contract",
	"X-Contract-Params",
	"X-Contract-Report",
	"X-Request-Id",
}

// corsExposeHeaders are the gateway's response headers a cross-origin page
// may read. Ollama exposes none, having none of its own.
var corsExposeHeaders = []string{"X-Contract", "X-Contract-Status", "X-Contract-Repairs", "X-Cache", "X-Request-Id"}

// corsAllowMethods and corsMaxAge are gin-contrib/cors's DefaultConfig,
// which Ollama keeps.
var corsAllowMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

const corsMaxAge = 12 * time.Hour

// Policy holds Ollama's origin and host rules, compiled once from the
// config.
type Policy struct {
	// checkHost is whether the Host header is checked: only when the
	// gateway listens on loopback, as Ollama checks it only when its
	// listener's address is loopback.
	checkHost bool
	// hosts are allowed_hosts and the listen address's own host name,
	// lower-cased.
	hosts map[string]bool

	allowAll  bool       // "*" is an allowed origin
	origins   []string   // exact origins, trimmed and lower-cased
	wildcards [][]string // {prefix, suffix}; "*" stands for either end
	normal    http.Header
	preflight http.Header
}

// NewPolicy compiles the gateway's listen address and its allowed_hosts
// and allowed_origins (already validated by package config) into the
// edge's rules.
func NewPolicy(listen string, allowedHosts, allowedOrigins []string) *Policy {
	p := &Policy{checkHost: listensOnLoopback(listen), hosts: map[string]bool{}}
	for _, h := range allowedHosts {
		p.hosts[strings.ToLower(h)] = true
	}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		p.hosts[strings.ToLower(h)] = true
	}

	// As envconfig.AllowedOrigins: the configured list, then the defaults.
	origins := append(append([]string(nil), allowedOrigins...), defaultOrigins...)
	seen := map[string]bool{}
	for _, o := range origins {
		o = strings.TrimSpace(o)
		if o == "*" {
			p.allowAll = true
		}
		if n := strings.ToLower(o); !seen[n] {
			seen[n] = true
			p.origins = append(p.origins, n)
		}
		// gin-contrib/cors's parseWildcardRules; config validation has
		// refused entries with more than one "*".
		switch i := strings.Index(o, "*"); {
		case i < 0:
		case i == 0:
			p.wildcards = append(p.wildcards, []string{"*", o[1:]})
		case i == len(o)-1:
			p.wildcards = append(p.wildcards, []string{o[:i], "*"})
		default:
			p.wildcards = append(p.wildcards, []string{o[:i], o[i+1:]})
		}
	}

	// gin-contrib/cors's generateNormalHeaders and generatePreflightHeaders
	// for Ollama's config (no credentials).
	p.normal, p.preflight = http.Header{}, http.Header{}
	p.normal.Set("Access-Control-Expose-Headers", strings.Join(canonicalHeaders(corsExposeHeaders), ","))
	p.preflight.Set("Access-Control-Allow-Methods", strings.Join(corsAllowMethods, ","))
	p.preflight.Set("Access-Control-Allow-Headers", strings.Join(canonicalHeaders(corsAllowHeaders), ","))
	p.preflight.Set("Access-Control-Max-Age", strconv.FormatInt(int64(corsMaxAge/time.Second), 10))
	if p.allowAll {
		p.normal.Set("Access-Control-Allow-Origin", "*")
		p.preflight.Set("Access-Control-Allow-Origin", "*")
	} else {
		p.normal.Set("Vary", "Origin")
		p.preflight.Add("Vary", "Origin")
		p.preflight.Add("Vary", "Access-Control-Request-Method")
		p.preflight.Add("Vary", "Access-Control-Request-Headers")
	}
	return p
}

// canonicalHeaders returns the header names in canonical form, without
// duplicates, as gin-contrib/cors lists them.
func canonicalHeaders(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		n = http.CanonicalHeaderKey(strings.TrimSpace(n))
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// listensOnLoopback reports whether the listen address is a loopback one,
// where Ollama checks Host. An empty host listens on every interface,
// where Ollama does not. A host name other than localhost is not resolved
// here: it counts as loopback, so that the check fails closed, and is
// itself an allowed Host.
func listensOnLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return true
	}
	if host == "" {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.IsLoopback()
	}
	return true
}

// middleware applies the origin rule, then the host rule, before any
// route runs: the admin routes, the guard and the proxy alike. The Origin
// header is then removed: the decision is made here, and the upstream,
// which sees its own Host, would judge it again and add CORS headers of
// its own to the ones set here.
func (p *Policy) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if done, err := p.cors(c); done {
			return err
		}
		if p.checkHost {
			if done, err := p.host(c); done {
				return err
			}
		}
		req.Header.Del(echo.HeaderOrigin)
		return next(c)
	}
}

// cors is gin-contrib/cors's applyCors with Ollama's config. It reports
// whether the request has been answered: refused (403) or a preflight
// (204).
func (p *Policy) cors(c echo.Context) (bool, error) {
	req := c.Request()
	origin := req.Header.Get(echo.HeaderOrigin)
	if origin == "" {
		return false, nil
	}
	// Same origin: a page of the gateway's own (the dashboard) calling it.
	if origin == "http://"+req.Host || origin == "https://"+req.Host {
		return false, nil
	}
	if !p.originAllowed(origin) {
		return true, &apierr.Error{Code: http.StatusForbidden,
			Msg: "origin not allowed: add it to allowed_origins to let pages from it call the gateway"}
	}
	h := c.Response().Header()
	if req.Method == http.MethodOptions {
		for k, v := range p.preflight {
			h[k] = v
		}
		if !p.allowAll {
			h.Set("Access-Control-Allow-Origin", origin)
		}
		return true, c.NoContent(http.StatusNoContent)
	}
	for k, v := range p.normal {
		h[k] = v
	}
	if !p.allowAll {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	return false, nil
}

// originAllowed is gin-contrib/cors's validateOrigin: an exact entry, or a
// wildcard entry's prefix and suffix.
func (p *Policy) originAllowed(origin string) bool {
	if p.allowAll {
		return true
	}
	for _, o := range p.origins {
		if o == origin {
			return true
		}
	}
	for _, w := range p.wildcards {
		if w[0] == "*" && strings.HasSuffix(origin, w[1]) {
			return true
		}
		if w[1] == "*" && strings.HasPrefix(origin, w[0]) {
			return true
		}
		if strings.HasPrefix(origin, w[0]) && strings.HasSuffix(origin, w[1]) {
			return true
		}
	}
	return false
}

// host is Ollama's allowedHostsMiddleware for a loopback listener. It
// reports whether the request has been answered: refused (403), or an
// OPTIONS request to an allowed host name, which Ollama answers 204
// itself.
func (p *Policy) host(c echo.Context) (bool, error) {
	req := c.Request()
	host, _, err := net.SplitHostPort(req.Host)
	if err != nil {
		host = req.Host
		// A bracketed IPv6 literal without port ("[::1]", as Go's client
		// sends for a default port) is an address too; Ollama, always on
		// a port of its own, never sees one.
		if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
			host = host[1 : len(host)-1]
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || isLocalIP(a) {
			return false, nil
		}
	}
	if allowedHost(host) || p.hosts[strings.ToLower(host)] {
		if req.Method == http.MethodOptions {
			return true, c.NoContent(http.StatusNoContent)
		}
		return false, nil
	}
	return true, &apierr.Error{Code: http.StatusForbidden,
		Msg: "host not allowed: the gateway listens on loopback and answers local host names only; add the name to allowed_hosts"}
}

// isLocalIP reports whether ip is one of this machine's interface
// addresses (Ollama's isLocalIP). It runs only for a Host that is a public
// IP address, as Ollama's does.
func isLocalIP(ip netip.Addr) bool {
	ifaces, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if parsed, _, err := net.ParseCIDR(a.String()); err == nil && parsed.String() == ip.String() {
				return true
			}
		}
	}
	return false
}

// localTLDs are the suffixes Ollama's allowedHost takes for local names.
var localTLDs = []string{"localhost", "local", "internal"}

// allowedHost is Ollama's allowedHost: no Host, localhost, the machine's
// hostname, or a name under .localhost, .local or .internal.
func allowedHost(host string) bool {
	host = strings.ToLower(host)
	if host == "" || host == "localhost" {
		return true
	}
	if hostname, err := os.Hostname(); err == nil && host == strings.ToLower(hostname) {
		return true
	}
	for _, tld := range localTLDs {
		if strings.HasSuffix(host, "."+tld) {
			return true
		}
	}
	return false
}
