package gateway

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/gateway/access"
	"github.com/contractgateway/gateway/gateway/models"
	"github.com/contractgateway/gateway/gateway/pool"
	"github.com/contractgateway/gateway/gateway/stats"
)

// StatsReport is the body of GET /admin/stats: the guarded requests'
// counts, and what only the server knows.
type StatsReport struct {
	stats.Report
	DebugStore map[string]bool `json:"debug_store"`
	// Routes are the virtual models with their state (ready,
	// upstream_model_missing, unknown) and, for a missing model, the fix.
	Routes []models.RouteState `json:"routes"`
	// Keys are every request (guarded or not) by API key name, when
	// access keys are configured: statuses, refusals and tokens charged.
	Keys map[string]access.KeyStats `json:"keys,omitempty"`
	// Upstreams are the Ollama servers: health, breaker, load, models.
	Upstreams []pool.MemberStats `json:"upstreams,omitempty"`
}

// statsRoute registers GET /admin/stats; report gives the counts (from
// the outcome store when there is one; its error, such as a 400 naming a
// bad parameter, is returned for the one error writer),
// routes the routes' states (nil: none), keys the counts by API key (nil:
// none), pool the Ollama servers' states.
func statsRoute(g *echo.Group, report func(*http.Request) (stats.Report, error), debugStore bool, routes func(context.Context) []models.RouteState, keys func() map[string]access.KeyStats,
	pool func() []pool.MemberStats) {
	g.GET("/admin/stats", func(c echo.Context) error {
		rep, err := report(c.Request())
		if err != nil {
			return err
		}
		r := StatsReport{Report: rep, DebugStore: map[string]bool{"enabled": debugStore}, Routes: []models.RouteState{}, Upstreams: pool()}
		if keys != nil {
			r.Keys = keys()
		}
		if routes != nil {
			r.Routes = routes(c.Request().Context())
		}
		return c.JSON(http.StatusOK, r)
	})
}
