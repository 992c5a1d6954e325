package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
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

// routeWatch keeps the state of every route from what the upstream's
// model list last said, and says aloud when a route's upstream model is
// missing: an operator whose config names a model the upstream lacks
// would otherwise see the virtual model vanish from /api/tags without a
// word. Every read of the list updates it: the one at start, each
// /api/tags and /v1/models a client asks through the gateway, each
// /admin/stats; /api/show and /api/pull of a virtual model update its
// route alone.
type routeWatch struct {
	list func() []route.VirtualModel
	log  *slog.Logger

	mu      sync.Mutex
	gateway string            // the gateway's address, for the fix
	state   map[string]string // route.ModelKey(route name) → state
}

func newRouteWatch(list func() []route.VirtualModel, log *slog.Logger, listen string) *routeWatch {
	return &routeWatch{list: list, log: log, gateway: listen, state: map[string]string{}}
}

// setAddress records the address the gateway serves on, once known.
func (w *routeWatch) setAddress(addr string) {
	w.mu.Lock()
	w.gateway = addr
	w.mu.Unlock()
}

// fix is the command that gives the upstream a model: ollama pull through
// the gateway, which passes a pull of any model but a virtual one on to
// the upstream.
func (w *routeWatch) fix(model string) string {
	w.mu.Lock()
	addr := w.gateway
	w.mu.Unlock()
	return "OLLAMA_HOST=http://" + addr + " ollama pull " + model
}

// observe sets the state of every route from names, the upstream's whole
// model list.
func (w *routeWatch) observe(names []string) {
	have := map[string]bool{}
	for _, n := range names {
		have[route.ModelKey(n)] = true
	}
	for _, vm := range w.list() {
		w.set(vm, have[route.ModelKey(vm.Upstream)])
	}
}

// set records whether vm's upstream model is there, and logs a change: a
// route whose model went missing (or was missing at the first look) is a
// warning naming the route, the model and the fix; one that became ready
// is news.
func (w *routeWatch) set(vm route.VirtualModel, present bool) {
	state := RouteModelMissing
	if present {
		state = RouteReady
	}
	key := route.ModelKey(vm.Name)
	w.mu.Lock()
	old := w.state[key]
	w.state[key] = state
	w.mu.Unlock()
	if old == state {
		return
	}
	if present {
		w.log.Info("route ready", "route", vm.Name, "upstream_model", vm.Upstream, "contract", vm.Contract)
		return
	}
	w.log.Warn("route's upstream model missing: the upstream does not have it, so requests to the route fail",
		"route", vm.Name, "upstream_model", vm.Upstream, "contract", vm.Contract, "fix", w.fix(vm.Upstream))
}

// states lists every route with its state, in configuration order.
func (w *routeWatch) states() []RouteState {
	out := []RouteState{}
	for _, vm := range w.list() {
		w.mu.Lock()
		st := w.state[route.ModelKey(vm.Name)]
		w.mu.Unlock()
		if st == "" {
			st = RouteUnknown
		}
		rs := RouteState{Model: vm.Name, Upstream: vm.Upstream, Contract: vm.Contract, State: st}
		if st == RouteModelMissing {
			rs.Fix = w.fix(vm.Upstream)
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

// refreshModels reads the upstream's model list and updates the routes'
// states from it. An upstream that does not answer leaves them as they
// were, and is logged at the first look only (readiness is /readyz's to
// report).
func (s *Server) refreshModels(ctx context.Context) error {
	if s.watch == nil {
		return nil
	}
	reply, err := s.up.Get(ctx, "/api/tags", nil)
	if err != nil {
		return err
	}
	list, err := strictjson.Parse(reply.Body)
	if err != nil || list.Kind != strictjson.KindObject {
		return &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream model list unreadable", Err: err}
	}
	s.watch.observe(modelNames(list, "models", "name"))
	return nil
}

// RouteStates reads the upstream's model list (within readyTimeout, as
// /readyz asks: /admin/stats must stay quick with the upstream down) and
// returns every route's state; when the upstream does not answer, the
// states it last gave.
func (s *Server) RouteStates(ctx context.Context) []RouteState {
	if s.watch == nil {
		return []RouteState{}
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	_ = s.refreshModels(ctx)
	return s.watch.states()
}

// checkModelsAtStart reads the model list once as serving begins, so that
// a route over a missing model is said aloud at start; the caller waits
// on the returned channel before it returns.
func (s *Server) checkModelsAtStart(base context.Context, addr string) <-chan struct{} {
	done := make(chan struct{})
	if s.watch == nil {
		close(done)
		return done
	}
	if !strings.HasPrefix(addr, ":") && addr != "" {
		s.watch.setAddress(addr)
	}
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(base, modelCheckTimeout)
		defer cancel()
		if err := s.refreshModels(ctx); err != nil {
			s.log.Warn("could not read the upstream's model list to check the routes' models", "error", apierr.From(err).Message())
		}
	}()
	return done
}
