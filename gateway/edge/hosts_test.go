package edge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// FuzzEdgePolicy feeds any Host and Origin to the edge on a loopback
// listen address: it never panics, a request it lets through carries no
// Origin any more, and a Host naming a non-local domain is never let
// through.
func FuzzEdgePolicy(f *testing.F) {
	for _, s := range [][2]string{
		{"localhost:11435", ""}, {"evil.example", ""}, {"[::1]", ""}, {"[::1]:1", "http://localhost:3000"},
		{"127.0.0.1:11435", "http://127.0.0.1:11435"}, {"x.local", "app://x"}, {"", "null"},
		{"evil.example:11435", "http://evil.example:11435"}, {"[", "*"}, {"10.0.0.1", "https://a.example.com"},
	} {
		f.Add(s[0], s[1])
	}
	p := NewPolicy("127.0.0.1:11435", nil, []string{"https://*.example.com"})
	e := echo.New()
	f.Fuzz(func(t *testing.T, host, origin string) {
		req := httptest.NewRequest(http.MethodGet, "/api/tags", nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		c := e.NewContext(req, httptest.NewRecorder())
		passed := false
		_ = p.Middleware(func(c echo.Context) error {
			passed = true
			if o := c.Request().Header.Get("Origin"); o != "" {
				t.Errorf("Origin %q passed on", o)
			}
			return nil
		})(c)
		name := strings.ToLower(host)
		if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.Contains(name, "]") {
			name = name[:i]
		}
		if passed && strings.HasSuffix(name, ".example") {
			t.Errorf("Host %q passed", host)
		}
	})
}
