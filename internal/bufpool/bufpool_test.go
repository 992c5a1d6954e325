package bufpool

import "testing"

func TestPool(t *testing.T) {
	p := New(2, 1024)
	if b := p.Get(); b != nil {
		t.Fatalf("Get on an empty pool = %v, want nil", b)
	}
	small := make([]byte, 10, 100)
	p.Put(small)
	p.Put(make([]byte, 0, 2048)) // over max: dropped
	p.Put(make([]byte, 0, 200))
	p.Put(make([]byte, 0, 300)) // full: dropped
	got := []int{cap(p.Get()), cap(p.Get())}
	if got[0] != 100 || got[1] != 200 {
		t.Errorf("kept capacities %v, want [100 200]", got)
	}
	if b := p.Get(); b != nil {
		t.Errorf("a third Get = cap %d, want nil: the pool kept what it should have dropped", cap(b))
	}
	p.Put(small)
	if b := p.Get(); len(b) != 0 || cap(b) != 100 {
		t.Errorf("Get = len %d cap %d, want an empty buffer of cap 100", len(b), cap(b))
	}
}
