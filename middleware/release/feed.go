package release

import "sync"

// Feed is what a run released, for every stream that follows it: the
// request's own and those of the identical requests that share its
// answer. Each follower takes the deltas in order from the first, so one
// that joins late gets those released so far at once and then the rest
// as they come. A feed nobody took from can be retracted: the answer is
// then made again as a whole, and the followers never see a delta of it.
type Feed struct {
	mu        sync.Mutex
	log       []string
	followers []*Follower
	taken     bool
	retracted bool
}

// NewFeed returns an empty feed.
func NewFeed() *Feed { return &Feed{} }

// Follower is one stream's place in a feed.
type Follower struct {
	f     *Feed
	next  int
	ready chan struct{}
}

// Follow returns a follower that signals ready (a channel with room for
// one signal) whenever deltas it has not taken are released. It does not
// signal the deltas already released: the caller takes them when it is
// ready to write them.
func (f *Feed) Follow(ready chan struct{}) *Follower {
	fl := &Follower{f: f, ready: ready}
	f.mu.Lock()
	f.followers = append(f.followers, fl)
	f.mu.Unlock()
	return fl
}

// Take returns the deltas released since the follower's last Take, in
// order; none once the feed is retracted.
func (fl *Follower) Take() []string {
	f := fl.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.retracted || fl.next == len(f.log) {
		return nil
	}
	out := f.log[fl.next:len(f.log):len(f.log)]
	fl.next = len(f.log)
	f.taken = true
	return out
}

// Retract withdraws the feed when no follower took a delta of it, and
// says whether it did. After it, Take returns nothing: nobody saw the
// items, so the answer may be made again whole, by any means.
func (f *Feed) Retract() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.taken {
		f.retracted = true
	}
	return f.retracted
}

// withdraw retracts the feed when nobody follows it, and says whether it
// is retracted: no client streams the answer, so nothing it releases
// would reach one before the answer is whole. A follower that comes
// later takes nothing, as after Retract.
func (f *Feed) withdraw() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.followers) == 0 && !f.taken {
		f.retracted = true
	}
	return f.retracted
}

// publish releases delta to every follower.
func (f *Feed) publish(delta string) {
	f.mu.Lock()
	f.log = append(f.log, delta)
	followers := f.followers
	f.mu.Unlock()
	for _, fl := range followers {
		signal(fl.ready)
	}
}
