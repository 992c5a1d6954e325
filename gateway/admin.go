package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// readyTimeout bounds the upstream check of /readyz.
const readyTimeout = 2 * time.Second

// routeMethods are the methods echo routes; Any registers these.
var routeMethods = []string{
	http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodOptions,
	http.MethodPatch, http.MethodPost, echo.PROPFIND, http.MethodPut, http.MethodTrace, echo.REPORT,
}

// adminRoutes registers /healthz (open), /readyz (open, with details for
// the token) and /metrics, and the caller's extra routes (token-checked), then claims the admin paths:
// another method on an admin path gets 405 and an unknown path below an
// admin prefix gets 404, in Ollama's error shape, instead of reaching the
// upstream.
func (s *Server) adminRoutes(extra func(*echo.Group)) error {
	e := s.echo
	var added []echo.Route
	e.OnAddRouteHandler = func(_ string, r echo.Route, _ echo.HandlerFunc, _ []echo.MiddlewareFunc) {
		added = append(added, r)
	}
	defer func() { e.OnAddRouteHandler = nil }()

	e.GET("/healthz", healthz)
	uiRoutes(e)
	public := map[string]bool{"/healthz": true, "/ui": true, "/ui/*": true}
	g := e.Group("")
	g.GET("/readyz", s.readyz)
	// A collector's error is logged, never sent: wrapHandler makes
	// promhttp's 500 the one error writer's.
	g.GET("/metrics", wrapHandler(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})))
	if extra != nil {
		extra(g)
	}

	methods := map[string][]string{} // path → methods registered
	var paths []string
	for _, r := range added {
		if r.Method == echo.RouteNotFound {
			continue // from a group's Use; only reached by methods echo does not route
		}
		if err := checkAdminPath(r.Path); err != nil {
			return fmt.Errorf("admin route %s %s: %w", r.Method, r.Path, err)
		}
		if _, ok := methods[r.Path]; !ok {
			paths = append(paths, r.Path)
		}
		methods[r.Path] = append(methods[r.Path], r.Method)
	}
	for _, p := range paths {
		if !public[p] {
			s.adminPath[p] = true
		}
	}
	prefixes := map[string]bool{}
	for _, p := range paths {
		allowed := methods[p]
		for _, m := range routeMethods {
			if !slices.Contains(allowed, m) {
				e.Add(m, p, methodNotAllowed(allowed))
			}
		}
		seg, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		prefixes["/"+seg] = public[p]
	}
	for prefix, open := range prefixes {
		catchAll := prefix + "/*"
		if _, taken := methods[catchAll]; taken {
			continue
		}
		e.Any(catchAll, notFound)
		if !open {
			s.adminPath[catchAll] = true
		}
	}
	return nil
}

// checkAdminPath refuses admin paths that would hide an Ollama endpoint:
// the root, /api/…, /v1/…, or a parameter or wildcard as first segment.
func checkAdminPath(p string) error {
	seg, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	switch {
	case seg == "", seg == "api", seg == "v1", strings.HasPrefix(seg, ":"), strings.HasPrefix(seg, "*"):
		return fmt.Errorf("shadows Ollama's endpoints (/, /api/…, /v1/…); use a path of its own such as /contracts")
	}
	return nil
}

func methodNotAllowed(allowed []string) echo.HandlerFunc {
	allow := strings.Join(allowed, ", ")
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return &apierr.Error{Code: http.StatusMethodNotAllowed,
			Msg: fmt.Sprintf("method %s not allowed on %s (allowed: %s)", c.Request().Method, c.Path(), allow)}
	}
}

func notFound(c echo.Context) error {
	return &apierr.Error{Code: http.StatusNotFound, Msg: fmt.Sprintf("no admin route %s", c.Request().URL.Path)}
}

func healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyzBrief is the echo context key requireAdminToken sets on a
// /readyz request that did not carry the admin token: it gets ready or
// not, nothing more.
const readyzBrief = "gateway.readyz_brief"

// readyz answers 200 when the upstream answers GET /api/version within
// readyTimeout, 503 otherwise (an open breaker included) and from the
// moment a shutdown begins, so that a load balancer stops sending new
// requests before the listener closes. It needs no token, for health
// checks: without the admin token (when one is set) it says ready or not
// and nothing more; with it, what the upstream client said of the
// upstream too.
func (s *Server) readyz(c echo.Context) error {
	brief := c.Get(readyzBrief) != nil
	if s.draining.Load() {
		if brief {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not ready"})
		}
		return &apierr.Error{Code: http.StatusServiceUnavailable, Msg: "not ready: shutting down"}
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	reply, err := s.up.Get(ctx, "/api/version", nil)
	if brief {
		if err != nil {
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not ready"})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
	if err != nil {
		// The log line says the upstream client's cause once, not its
		// status and message again.
		he := apierr.From(err)
		cause := he.Err
		if cause == nil {
			cause = he
		}
		return &apierr.Error{Code: http.StatusServiceUnavailable, Msg: "upstream not ready: " + he.Message(), Err: cause}
	}
	var v struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(reply.Body, &v) // a reply is enough; the version is a courtesy
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "upstream_version": v.Version})
}

// requireAdminToken checks "Authorization: Bearer TOKEN" on admin routes
// when an admin token is configured. /readyz is answered without it, in
// brief: a load balancer's health check carries no token.
func (s *Server) requireAdminToken(next echo.HandlerFunc) echo.HandlerFunc {
	if s.cfg.AdminToken == "" {
		return next
	}
	want := []byte(s.cfg.AdminToken)
	return func(c echo.Context) error {
		if !s.adminPath[c.Path()] {
			return next(c)
		}
		msg := checkAdminToken(c.Request().Header.Get(echo.HeaderAuthorization), want)
		if c.Path() == "/readyz" {
			if msg != "" {
				c.Set(readyzBrief, true)
			}
			return next(c)
		}
		if msg != "" {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="gateway admin"`)
			return &apierr.Error{Code: http.StatusUnauthorized, Msg: msg}
		}
		return next(c)
	}
}

// checkAdminToken returns "" when the Authorization header carries the
// admin token, else what the operator must change. A missing token and a
// wrong one get different words: the first is a client that sends none,
// the second a token that differs from the gateway's admin_token, and each
// is fixed in a different place.
func checkAdminToken(header string, want []byte) string {
	scheme, token, _ := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	switch {
	case header == "":
		return "admin token required: send Authorization: Bearer <token>"
	case !strings.EqualFold(scheme, "Bearer"):
		return fmt.Sprintf("admin token required: the Authorization header is %q, want Bearer <token>", scheme)
	case token == "":
		return "admin token required: the Authorization header says Bearer but holds no token"
	case subtle.ConstantTimeCompare([]byte(token), want) != 1:
		return "admin token wrong: the bearer token is not the gateway's admin_token (GATEWAY_ADMIN_TOKEN)"
	}
	return ""
}
