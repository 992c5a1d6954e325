package models

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// tagsUpstream answers /api/tags with the one model "stories".
type tagsUpstream struct{}

func (tagsUpstream) Get(_ context.Context, path string, _ http.Header) (upstream.Reply, error) {
	return upstream.Reply{Header: http.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"models":[{"name":"stories:latest","model":"stories:latest"}]}`)}, nil
}

func (tagsUpstream) Post(context.Context, string, []byte, http.Header) (upstream.Reply, error) {
	return upstream.Reply{}, nil
}

// TestStatesOnListing: a client's /api/tags through the gateway is a read
// of the model list, which sets the states without a read of their own.
func TestStatesOnListing(t *testing.T) {
	vms := []route.VirtualModel{{Name: "ghost", Upstream: "absent", Contract: "json@1"}, {Name: "tale", Upstream: "stories", Contract: "json@1"}}
	m := New(tagsUpstream{}, func() []route.VirtualModel { return vms }, slog.New(slog.NewTextHandler(io.Discard, nil)), "127.0.0.1:11435")
	e := echo.New()
	m.Routes(e, func(c echo.Context) error { return c.NoContent(http.StatusTeapot) })
	want := func(when string, states ...string) {
		t.Helper()
		got := m.states()
		for i, st := range states {
			if got[i].State != st {
				t.Errorf("state of %s %s = %q, want %q", got[i].Model, when, got[i].State, st)
			}
		}
	}
	want("before any read", RouteUnknown, RouteUnknown)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/tags", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/tags = %d %s, want 200", rec.Code, rec.Body)
	}
	want("after /api/tags", RouteModelMissing, RouteReady)
}
