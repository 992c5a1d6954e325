// Package edge holds the rules every request of the gateway passes before
// any route, guarded or passed through: Ollama's Host and Origin defences,
// one canonical path that routing, the guard and the proxy all use, and the
// return of the memory large request bodies leave behind. Each is an echo
// middleware that package gateway installs.
package edge

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// Ollama routes on the decoded path: Go's server decodes the request line
// into URL.Path, Ollama's http.DefaultServeMux redirects paths with empty
// or dot segments to their cleaned form, and its gin router matches
// URL.Path (UseRawPath is off). Echo, left alone, routes on the raw path,
// so `/api/%67enerate` would be pass-through here and generate there. The
// gateway therefore canonicalises every path before routing, and the guard,
// the virtual-model handlers and the proxy all see — and the proxy
// forwards — that one path.

// ErrBadPath is the cause of a path the gateway refuses to route: an
// invalid percent-escape, a control character, or an encoded "/" on a
// path that goes to Ollama, which would decode it into a separator the
// gateway did not route on.
var ErrBadPath = errors.New("invalid request path")

// canonicalPath returns the canonical form of a request's escaped path:
// every segment percent-decoded (as url.PathUnescape does), empty and "."
// segments dropped, ".." resolved (never above the root), a trailing "/"
// kept as Go's ServeMux keeps it. It returns the decoded path and its
// escaped form, which is Go's default encoding of the decoded path except
// that a "/" decoded from %2F stays "%2F" (encSlash reports one): such a
// segment is one segment, not two. A path that does not start with "/",
// an invalid escape, or a decoded control character (NUL included) is an
// error wrapping ErrBadPath.
func canonicalPath(escaped string) (decoded, canon string, encSlash bool, err error) {
	if escaped == "" {
		return "/", "/", false, nil
	}
	if escaped[0] != '/' {
		return "", "", false, fmt.Errorf("%w: it must start with /", ErrBadPath)
	}
	raw := strings.Split(escaped[1:], "/")
	segs := make([]string, 0, len(raw))
	for _, r := range raw {
		seg, err := url.PathUnescape(r)
		if err != nil {
			return "", "", false, fmt.Errorf("%w: %v", ErrBadPath, err)
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] < 0x20 || seg[i] == 0x7f {
				return "", "", false, fmt.Errorf("%w: control character %q", ErrBadPath, seg[i])
			}
		}
		switch seg {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			if strings.Contains(seg, "/") {
				encSlash = true
			}
			segs = append(segs, seg)
		}
	}
	// ServeMux keeps a trailing slash; gin then redirects it (307) to the
	// route without, which comes back through the gateway.
	trailing := len(segs) > 0 && strings.HasSuffix(escaped, "/")

	var d, c strings.Builder
	for _, seg := range segs {
		d.WriteByte('/')
		d.WriteString(seg)
		c.WriteByte('/')
		c.WriteString(strings.ReplaceAll((&url.URL{Path: seg}).EscapedPath(), "/", "%2F"))
	}
	if len(segs) == 0 || trailing {
		d.WriteByte('/')
		c.WriteByte('/')
	}
	return d.String(), c.String(), encSlash, nil
}

// ctxKeyPathError carries CanonicalizePath's verdict to CheckPath, which
// runs after routing and the request log are set up.
const ctxKeyPathError = "contractgateway.path_error"

// CanonicalizePath is a Pre middleware: it replaces the request's URL.Path
// and RawPath by their canonical forms before echo routes on them. A path
// that cannot be canonicalised is left as it came and refused by
// CheckPath, so that the refusal is logged like any other answer.
func CanonicalizePath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if c.Request().Method == http.MethodConnect {
			return next(c)
		}
		decoded, canon, encSlash, err := canonicalPath(u.EscapedPath())
		switch {
		case err != nil:
			c.Set(ctxKeyPathError, err)
		case encSlash:
			c.Set(ctxKeyPathError, errEncodedSlash)
		}
		if err == nil {
			u.Path, u.RawPath = decoded, ""
			if u.EscapedPath() != canon {
				u.RawPath = canon
			}
		}
		return next(c)
	}
}

// errEncodedSlash marks a canonical path with a %2F in a segment: fine for
// the gateway's own routes (ids in admin paths), refused on Ollama's.
var errEncodedSlash = fmt.Errorf("%w: encoded /", ErrBadPath)

// CheckPath refuses, with 400, the paths CanonicalizePath could not
// canonicalise, and a %2F on a route that goes to Ollama.
func CheckPath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err, _ := c.Get(ctxKeyPathError).(error)
		if err == nil || (errors.Is(err, errEncodedSlash) && !ollamaRoute(c.Path())) {
			return next(c)
		}
		return &apierr.Error{Code: http.StatusBadRequest, Msg: err.Error(), Err: err}
	}
}

// ollamaRoute reports whether an echo route pattern serves Ollama's
// endpoints (guarded, virtual-model or pass-through) rather than the
// gateway's own.
func ollamaRoute(pattern string) bool {
	return pattern == "/*" || pattern == "/" || strings.HasPrefix(pattern, "/api/") || strings.HasPrefix(pattern, "/v1/")
}
