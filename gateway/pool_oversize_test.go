package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/pool"
)

// TestPoolUnionLeavesOutAnOversizeUpstream: behind the gateway, an
// upstream that answers a listing with more than the pool's bound (a
// valid listing padded past it) is left out of /api/tags and /v1/models,
// which list the other upstream's models, and its errors count them (the
// upstream package's tests measure how little of them is read).
func TestPoolUnionLeavesOutAnOversizeUpstream(t *testing.T) {
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"small:latest","object":"model"}]}`)
			return
		}
		io.WriteString(w, `{"models":[{"name":"small:latest","model":"small:latest"}]}`)
	}))
	defer a.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := `{"models":[{"name":"huge:latest","model":"huge:latest"}],"pad":"`
		if r.URL.Path == "/v1/models" {
			head = `{"object":"list","data":[{"id":"huge:latest","object":"model"}],"pad":"`
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		n, _ := io.WriteString(w, head)
		sent := int64(n)
		chunk := strings.Repeat("x", 64<<10)
		for sent < pool.MaxMemberAnswerBytes+1<<20 {
			n, err := io.WriteString(w, chunk)
			sent += int64(n)
			if err != nil {
				break
			}
		}
		io.WriteString(w, `"}`)
	}))
	defer huge.Close()
	srv, gw := newPoolGateway(t, nil, func(cfg *config.Config) {
		// No health checks: they would take the oversize upstream out
		// before any union asked it.
		cfg.UpstreamHealthInterval = -time.Second
	}, a.URL, huge.URL)
	tests := []struct{ path, want string }{
		{"/api/tags", `"name":"small:latest"`},
		{"/v1/models", `"id":"small:latest"`},
	}
	for _, tt := range tests {
		resp, body := sendRequest(t, gw.URL, http.MethodGet, tt.path, nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tt.want) || strings.Contains(string(body), "huge") {
			t.Errorf("GET %s = %d %.300s, want 200 with %s and without the oversize upstream's model", tt.path, resp.StatusCode, body, tt.want)
		}
	}
	if s := srv.up.Stats()[1]; s.Errors == 0 {
		t.Errorf("the oversize upstream's errors = %d, want its oversize answers counted", s.Errors)
	}
}
