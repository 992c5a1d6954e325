package cache

import (
	"slices"
	"testing"
)

func TestBounded(t *testing.T) {
	type add struct {
		k    string
		cost int64
	}
	tests := []struct {
		name      string
		adds      []add
		want      []string // keys kept, least recently used first
		bytes     int64
		evictions uint64
	}{
		{"fits", []add{{"a", 3}, {"b", 4}}, []string{"a", "b"}, 7, 0},
		{"oldest makes room", []add{{"a", 3}, {"b", 4}, {"c", 5}}, []string{"b", "c"}, 9, 1},
		{"replacing a key is no eviction", []add{{"a", 3}, {"a", 8}}, []string{"a"}, 8, 0},
		{"too costly is not kept, the old entry stays", []add{{"a", 3}, {"a", 11}}, []string{"a"}, 3, 0},
		{"one fills the bound", []add{{"a", 3}, {"b", 4}, {"c", 10}}, []string{"c"}, 10, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBounded[string, int64](10)
			for _, a := range tt.adds {
				b.Add(a.k, a.cost, a.cost)
			}
			if got := b.lru.Keys(); !slices.Equal(got, tt.want) {
				t.Errorf("keys after %v = %q, want %q", tt.adds, got, tt.want)
			}
			if b.Bytes() != tt.bytes || b.Evictions() != tt.evictions || b.Len() != len(tt.want) {
				t.Errorf("after %v: Bytes, Evictions, Len = %d, %d, %d, want %d, %d, %d",
					tt.adds, b.Bytes(), b.Evictions(), b.Len(), tt.bytes, tt.evictions, len(tt.want))
			}
		})
	}
}

func TestBoundedGetRemove(t *testing.T) {
	b := NewBounded[string, string](10)
	b.Add("a", "x", 4)
	b.Add("b", "y", 4)
	if v, ok := b.Get("a"); !ok || v != "x" {
		t.Fatalf("Get(a) = %q, %v, want %q, true", v, ok, "x")
	}
	b.Add("c", "z", 4) // a was used last: b makes room
	if _, ok := b.Get("b"); ok {
		t.Errorf("Get(b) after a was used and c added = true, want false")
	}
	b.Remove("a")
	if _, ok := b.Get("a"); ok || b.Bytes() != 4 {
		t.Errorf("after Remove(a): Get(a) = %v, Bytes = %d, want false, 4", ok, b.Bytes())
	}
}
