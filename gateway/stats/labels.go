package stats

import (
	"sync"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/route"
)

// MaxModels bounds the distinct model names that get series and rows of
// their own. Names arrive canonical (route.ModelName), so a client's
// spelling makes no new one, but an ad-hoc request may still name any
// model its upstream answers; past the bound they share OtherModel.
const MaxModels = 100

// OtherModel is the label of every model past MaxModels.
const OtherModel = "other"

// ModelLabels hands out model labels, at most max distinct ones: the first
// max names seen keep theirs, every later one is OtherModel. Prometheus
// keeps every series it was ever given, and the stats every row, so an
// unbounded label is unbounded memory.
type ModelLabels struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

// NewModelLabels returns labels bounded to max distinct names (max <= 0:
// MaxModels).
func NewModelLabels(max int) *ModelLabels {
	if max <= 0 {
		max = MaxModels
	}
	return &ModelLabels{max: max, seen: map[string]struct{}{}}
}

// Label returns the label of model m: m itself while it is one of the
// first max names seen (the empty name always is), else OtherModel.
func (l *ModelLabels) Label(m string) string {
	if m == "" {
		return m
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[m]; ok {
		return m
	}
	if len(l.seen) >= l.max {
		return OtherModel
	}
	l.seen[m] = struct{}{}
	return m
}

// Of returns the contract and model labels of a guarded request's Event,
// bounded although clients choose schemas and model names: every ad-hoc
// schema contract (one id per schema) counts as route.AdHoc ("schema"), a
// request that ended in an upstream error — perhaps for a model the
// upstream does not have — has model "", and the model is bounded as
// Label bounds it.
func (l *ModelLabels) Of(ev middleware.Event) (contract, model string) {
	contract, model = ev.Contract, ev.Model
	if ev.Route == route.AdHoc {
		contract = route.AdHoc
	}
	if ev.Status == middleware.StatusError {
		model = ""
	}
	return contract, l.Label(model)
}
