package middleware

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/upstream"
)

// TestEventNamesTheCaller checks that a guarded request's Event carries
// the name of the API key an access check in front of the guard gave it
// (WithCaller), so that the outcome store can say whose request failed.
func TestEventNamesTheCaller(t *testing.T) {
	tests := []struct {
		name, caller, want string
	}{
		{"with a key", "team-a", "team-a"},
		{"without keys", "", ""},
	}
	up := upstreamAnswering(t, `{"a":1}`)
	u, _ := url.Parse(up.URL)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := make(chan Event, 1)
			cfg := DefaultGuardConfig
			cfg.Resolver, cfg.Upstream = builtinRoutes(t), upstream.New(upstream.Options{URL: u})
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg.Observe = func(ev Event) { events <- ev }
			guard, err := cfg.ToMiddleware()
			if err != nil {
				t.Fatal(err)
			}
			e := echo.New()
			e.HTTPErrorHandler = ErrorHandler
			e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					if tt.caller != "" {
						r := c.Request()
						c.SetRequest(r.WithContext(WithCaller(r.Context(), tt.caller)))
					}
					return next(c)
				}
			})
			e.Use(guard)
			gw := httptest.NewServer(e)
			defer gw.Close()
			resp, body := postJSONContract(t, gw.URL+"/api/generate", `{"model":"m","prompt":"p","stream":false}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
			}
			if ev := <-events; ev.Key != tt.want {
				t.Errorf("Event.Key = %q, want %q", ev.Key, tt.want)
			}
		})
	}
}
