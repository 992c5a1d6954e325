package pool

import (
	"cmp"
	"slices"
)

// candidate is what the choice of an upstream knows of one member of a
// [Pool] for one request: a snapshot, so that the choice itself is a pure
// function of it.
type candidate struct {
	// Known is set once the member's model list has been read; until then
	// it may have any model.
	Known bool
	// Healthy is false while the member fails its health checks.
	Healthy bool
	// Open is set while the member's breaker is open.
	Open bool
	// Has and Loaded say whether the member has the model, and has it in
	// memory (its /api/ps).
	Has    bool
	Loaded bool
	// InFlight counts the member's requests the gateway has sent and not
	// yet read to their end.
	InFlight int64
	// Weight is the member's configured weight, at least 1.
	Weight int
}

// verdict is the outcome of a choice.
type verdict int

const (
	chosen   verdict = iota // members to try, best first
	notFound                // no member has the model: 404, and nothing pulls it
	allDown                 // every member that has the model is down: 503
)

// busyAfter is the number of requests in flight from which a member that
// has the model loaded is no longer preferred for it: Ollama runs few
// requests of one model at once (OLLAMA_NUM_PARALLEL), the rest wait in
// its queue, and a member that loads the model meanwhile serves sooner.
// Without it, the first member to load a model would take every request
// for it while the others stayed idle.
const busyAfter = 4

// choose orders the members that may serve model (all of them when model
// is ""), best first: healthy members whose breaker is not open and that
// have the model (or whose model list is not yet known), those with the
// model loaded (and fewer than busyAfter requests in flight) first, then
// the fewest in flight, then the higher weight; members equal in all
// three take turns, turn deciding who is first. The rest of the order is
// where a failed request goes next.
func choose(cs []candidate, model string, turn uint64) ([]int, verdict) {
	var has []int
	for i, c := range cs {
		if model == "" || !c.Known || c.Has {
			has = append(has, i)
		}
	}
	if len(has) == 0 {
		return nil, notFound
	}
	var up []int
	for _, i := range has {
		if cs[i].Healthy && !cs[i].Open {
			up = append(up, i)
		}
	}
	if len(up) == 0 {
		return nil, allDown
	}
	n := uint64(len(cs))
	rank := func(i int) uint64 { return (uint64(i) + n - turn%n) % n }
	slices.SortStableFunc(up, func(a, b int) int {
		ca, cb := cs[a], cs[b]
		la, lb := ca.Loaded && ca.InFlight < busyAfter, cb.Loaded && cb.InFlight < busyAfter
		switch {
		case la != lb:
			if la {
				return -1
			}
			return 1
		case ca.InFlight != cb.InFlight:
			return cmp.Compare(ca.InFlight, cb.InFlight)
		case ca.Weight != cb.Weight:
			return cmp.Compare(cb.Weight, ca.Weight)
		}
		return cmp.Compare(rank(a), rank(b))
	})
	return up, chosen
}
