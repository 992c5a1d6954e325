package release

import (
	"slices"
	"testing"
)

// TestFeed: followers take every delta in order from the first, a late
// one those released before it at once; each is signalled when it has
// deltas; a feed is retracted only while nobody took from it, and after
// that nobody gets a delta.
func TestFeed(t *testing.T) {
	f := NewFeed()
	readyA := make(chan struct{}, 1)
	a := f.Follow(readyA)
	f.publish("1")
	f.publish("2")
	if len(readyA) != 1 {
		t.Fatal("the follower was not signalled")
	}
	<-readyA
	if got := a.Take(); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("first Take %v, want [1 2]", got)
	}
	if got := a.Take(); got != nil {
		t.Fatalf("Take with nothing new %v, want nil", got)
	}
	b := f.Follow(make(chan struct{}, 1))
	f.publish("3")
	if got := b.Take(); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("late follower took %v, want every delta from the first", got)
	}
	if got := a.Take(); !slices.Equal(got, []string{"3"}) {
		t.Errorf("first follower then took %v, want [3]", got)
	}
	if f.Retract() {
		t.Error("a feed followers took from was retracted")
	}

	g := NewFeed()
	c := g.Follow(nil)
	g.publish("x")
	if !g.Retract() {
		t.Fatal("a feed nobody took from was not retracted")
	}
	g.publish("y")
	if got := c.Take(); got != nil {
		t.Errorf("Take after the retraction %v, want nil", got)
	}
	if got := g.Follow(nil).Take(); got != nil {
		t.Errorf("a follower after the retraction took %v", got)
	}
}
