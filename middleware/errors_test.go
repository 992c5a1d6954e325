package middleware

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// TestGuardReturnsItsErrors checks that the guard hands its errors to
// echo's error handler, the one writer, instead of writing them itself:
// an application's own handler sees each of them with its status.
func TestGuardReturnsItsErrors(t *testing.T) {
	tests := []struct {
		name, contract, body string
		want                 int
	}{
		{"body not JSON", "json", `{"model":`, http.StatusBadRequest},
		{"unknown contract", "nope", `{"model":"m","prompt":"p"}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultGuardConfig
			cfg.Resolver = builtinRoutes(t)
			cfg.Upstream = upstreamFunc(func(*http.Request) (*http.Response, error) {
				return nil, errors.New("no upstream call expected")
			})
			guard, err := cfg.ToMiddleware()
			if err != nil {
				t.Fatal(err)
			}
			var got error
			e := echo.New()
			e.HTTPErrorHandler = func(err error, c echo.Context) {
				got = err
				ErrorHandler(err, c)
			}
			e.Use(guard)
			e.Any("/*", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
			req := httptest.NewRequest(http.MethodPost, "/api/generate", strings.NewReader(tt.body))
			req.Header.Set("X-Contract", tt.contract)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			var he *apierr.Error
			if !errors.As(got, &he) || he.Status() != tt.want {
				t.Fatalf("error handler got %v, want an *apierr.Error with status %d", got, tt.want)
			}
			if rec.Code != tt.want || !strings.HasPrefix(rec.Body.String(), `{"error":`) {
				t.Errorf("answer %d %s, want %d in Ollama's shape", rec.Code, rec.Body, tt.want)
			}
		})
	}
}
