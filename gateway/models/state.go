package models

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// The states of a route (a virtual model), as /admin/stats and the
// dashboard show them.
const (
	// RouteReady: the upstream has the route's upstream model.
	RouteReady = "ready"
	// RouteModelMissing: the upstream's model list lacks the route's
	// upstream model; requests to the route fail until it is pulled.
	RouteModelMissing = "upstream_model_missing"
	// RouteUnknown: the upstream's model list has not been read yet, or
	// could not be.
	RouteUnknown = "unknown"
)

// modelCheckTimeout bounds one read of the upstream's model list.
const modelCheckTimeout = 5 * time.Second

// RouteState is one route's row of /admin/stats: its names, its state and,
// when its upstream model is missing, the command that fixes it.
type RouteState struct {
	Model    string `json:"model"`
	Upstream string `json:"upstream_model"`
	Contract string `json:"contract"`
	State    string `json:"state"`
	Fix      string `json:"fix,omitempty"`
}

// setAddress records the address the gateway serves on, once known.
func (m *Models) setAddress(addr string) {
	m.mu.Lock()
	m.gateway = addr
	m.mu.Unlock()
}

// fix is the command that gives the upstream a model: ollama pull through
// the gateway, which passes a pull of any model but a virtual one on to
// the upstream.
func (m *Models) fix(model string) string {
	m.mu.Lock()
	addr := m.gateway
	m.mu.Unlock()
	return "OLLAMA_HOST=http://" + addr + " ollama pull " + model
}

// observe sets the state of every route from names, the upstream's whole
// model list.
func (m *Models) observe(names []string) {
	have := map[string]bool{}
	for _, n := range names {
		have[route.ModelKey(n)] = true
	}
	for _, vm := range m.list() {
		m.set(vm, have[route.ModelKey(vm.Upstream)])
	}
}

// set records whether vm's upstream model is there, and logs a change: a
// route whose model went missing (or was missing at the first look) is a
// warning naming the route, the model and the fix; one that became ready
// is news.
func (m *Models) set(vm route.VirtualModel, present bool) {
	state := RouteModelMissing
	if present {
		state = RouteReady
	}
	key := route.ModelKey(vm.Name)
	m.mu.Lock()
	old := m.state[key]
	m.state[key] = state
	m.mu.Unlock()
	if old == state {
		return
	}
	if present {
		m.log.Info("route ready", "route", vm.Name, "upstream_model", vm.Upstream, "contract", vm.Contract)
		return
	}
	m.log.Warn("route's upstream model missing: the upstream does not have it, so requests to the route fail",
		"route", vm.Name, "upstream_model", vm.Upstream, "contract", vm.Contract, "fix", m.fix(vm.Upstream))
}

// states lists every route with its state, in configuration order.
func (m *Models) states() []RouteState {
	out := []RouteState{}
	for _, vm := range m.list() {
		m.mu.Lock()
		st := m.state[route.ModelKey(vm.Name)]
		m.mu.Unlock()
		if st == "" {
			st = RouteUnknown
		}
		rs := RouteState{Model: vm.Name, Upstream: vm.Upstream, Contract: vm.Contract, State: st}
		if st == RouteModelMissing {
			rs.Fix = m.fix(vm.Upstream)
		}
		out = append(out, rs)
	}
	return out
}

// modelNames reads the names of an /api/tags answer ("models"[].name) or
// a /v1/models one ("data"[].id).
func modelNames(list *strictjson.Value, array, key string) []string {
	var out []string
	if items := list.Get(array); items != nil && items.Kind == strictjson.KindArray {
		for _, it := range items.Items {
			if n, ok := it.Get(key).AsString(); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// refresh reads the upstream's model list and updates the routes'
// states from it. An upstream that does not answer leaves them as they
// were, and is logged at the first look only (readiness is /readyz's to
// report).
func (m *Models) refresh(ctx context.Context) error {
	reply, err := m.up.Get(ctx, "/api/tags", nil)
	if err != nil {
		return err
	}
	list, err := strictjson.Parse(reply.Body)
	if err != nil || list.Kind != strictjson.KindObject {
		return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream model list unreadable", Err: err}
	}
	m.observe(modelNames(list, "models", "name"))
	return nil
}

// States reads the upstream's model list within ctx and returns every
// route's state; when the upstream does not answer, the states it last
// gave. Without virtual models it returns none.
func (m *Models) States(ctx context.Context) []RouteState {
	if m == nil {
		return []RouteState{}
	}
	_ = m.refresh(ctx)
	return m.states()
}

// CheckAtStart reads the model list once as serving begins on addr, so
// that a route over a missing model is said aloud at start; the caller
// waits on the returned channel before it returns.
func (m *Models) CheckAtStart(base context.Context, addr string) <-chan struct{} {
	done := make(chan struct{})
	if m == nil {
		close(done)
		return done
	}
	if !strings.HasPrefix(addr, ":") && addr != "" {
		m.setAddress(addr)
	}
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(base, modelCheckTimeout)
		defer cancel()
		if err := m.refresh(ctx); err != nil {
			m.log.Warn("could not read the upstream's model list to check the routes' models", "error", apierr.From(err).Message())
		}
	}()
	return done
}
