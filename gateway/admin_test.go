package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/contractgateway/gateway/config"
)

// contractsAdmin stands in for the /contracts routes another package adds.
func contractsAdmin(g *echo.Group) {
	g.GET("/contracts", func(c echo.Context) error { return c.JSON(http.StatusOK, []string{"mcq"}) })
	g.GET("/contracts/:name", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"id": c.Param("name")}) })
	g.POST("/contracts/:name/validate", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]bool{"valid": true}) })
}

func TestAdminRoutes(t *testing.T) {
	const token = "s3cret"
	f := newProxyFixture(t, &recordingUpstream{}, func(c *config.Config) { c.AdminToken = token }, Options{Admin: contractsAdmin})
	ok := http.Header{"Authorization": {"Bearer " + token}}
	tests := []struct {
		name         string
		method, path string
		header       http.Header
		wantStatus   int
		wantBody     string // substring; for errors, of the message
	}{
		{"healthz needs no token", "GET", "/healthz", nil, 200, `{"status":"ok"}`},
		{"readyz without token says ready, nothing more", "GET", "/readyz", nil, 200, `{"status":"ready"}`},
		{"readyz with a wrong token says ready, nothing more", "GET", "/readyz", http.Header{"Authorization": {"Bearer nope"}}, 200, `{"status":"ready"}`},
		{"readyz with a basic header says ready, nothing more", "GET", "/readyz", http.Header{"Authorization": {"Basic " + token}}, 200, `{"status":"ready"}`},
		{"readyz", "GET", "/readyz", ok, 200, `"upstream_version":"0.17.4"`},
		{"bearer is case-insensitive", "GET", "/readyz", http.Header{"Authorization": {"bearer " + token}}, 200, `"status":"ok"`},
		{"metrics without token", "GET", "/metrics", nil, 401, "admin token required"},
		{"metrics", "GET", "/metrics", ok, 200, "go_goroutines"},
		{"extra route without token", "GET", "/contracts", nil, 401, "admin token required"},
		{"extra route", "GET", "/contracts", ok, 200, `["mcq"]`},
		{"extra route with a param", "GET", "/contracts/mcq", ok, 200, `{"id":"mcq"}`},
		{"extra POST route", "POST", "/contracts/mcq/validate", ok, 200, `{"valid":true}`},
		{"unknown admin route", "GET", "/contracts/mcq/nope", ok, 404, "no admin route /contracts/mcq/nope"},
		{"unknown admin route needs the token too", "GET", "/contracts/mcq/nope", nil, 401, "admin token required"},
		{"wrong method on an admin route", "DELETE", "/contracts/mcq", ok, 405, "method DELETE not allowed"},
		{"wrong method on healthz", "POST", "/healthz", nil, 405, "allowed: GET"},
		{"Ollama's root is not shadowed", "GET", "/", nil, 200, "Ollama is running"},
		{"Ollama's HEAD root is not shadowed", "HEAD", "/", nil, 200, ""},
		{"Ollama's api passes through", "GET", "/api/tags", nil, 200, "stories:latest"},
		{"unknown path goes upstream", "GET", "/nothing/here", nil, 404, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, tt.method, tt.path, nil, tt.header)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s %s: status %d (%s), want %d", tt.method, tt.path, resp.StatusCode, body, tt.wantStatus)
			}
			got := string(body)
			if resp.StatusCode >= 400 && tt.method != "HEAD" {
				got = ollamaError(t, resp, body)
			}
			if !strings.Contains(got, tt.wantBody) {
				t.Errorf("%s %s: body %q, want it to contain %q", tt.method, tt.path, got, tt.wantBody)
			}
		})
	}
}

func TestAdminWithoutToken(t *testing.T) {
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Admin: contractsAdmin})
	for _, path := range []string{"/readyz", "/metrics", "/contracts"} {
		if resp, body := f.do(t, "GET", path, nil, nil); resp.StatusCode != 200 {
			t.Errorf("GET %s without an admin token configured: %d %s, want 200", path, resp.StatusCode, body)
		}
	}
}

func TestReadyzUpstreamDown(t *testing.T) {
	f := newProxyFixture(t, nil, nil, Options{})
	resp, body := f.do(t, "GET", "/readyz", nil, nil)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	if msg := ollamaError(t, resp, body); !strings.HasPrefix(msg, "upstream not ready") {
		t.Errorf("error = %q, want upstream not ready…", msg)
	}
	if resp, _ := f.do(t, "GET", "/healthz", nil, nil); resp.StatusCode != 200 {
		t.Errorf("healthz = %d with the upstream down, want 200 (liveness is the gateway's own)", resp.StatusCode)
	}
}

func TestMetricsOnCallersRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newProxyFixture(t, &recordingUpstream{}, nil, Options{Registry: reg})
	f.do(t, "GET", "/api/tags", nil, nil)
	_, body := f.do(t, "GET", "/metrics", nil, nil)
	for _, want := range []string{
		`gateway_http_requests_total{code="200",method="GET",route="/*"} 1`,
		"gateway_upstream_breaker_state 0",
		"go_goroutines",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// A second server on the same registry reuses the collectors.
	if _, err := New(config.Default(), Options{Registry: reg}); err != nil {
		t.Errorf("second New on one registry: %v", err)
	}
}

func TestAdminMustNotShadowOllama(t *testing.T) {
	tests := []string{"/", "/api/contracts", "/v1/contracts", "/:name", "/*"}
	for _, path := range tests {
		_, err := New(config.Default(), Options{Admin: func(g *echo.Group) {
			g.GET(path, func(c echo.Context) error { return nil })
		}})
		if err == nil || !strings.Contains(err.Error(), "shadows Ollama") {
			t.Errorf("New(admin route %q) = %v, want a shadowing error", path, err)
		}
	}
}
