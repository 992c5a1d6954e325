package stats

import "sync"

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
