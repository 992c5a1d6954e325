package stats

import (
	"testing"
	"time"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/repair"
)

func TestStatsPercentilesAndBounds(t *testing.T) {
	s := New(func() time.Time { return time.Unix(0, 0) })
	for i := 1; i <= 100; i++ {
		s.Observe(middleware.Event{Contract: "c", Model: "m", Status: repair.StatusFailed, Rungs: []string{"local"},
			Latency: time.Duration(i) * time.Millisecond, Cache: "bypass"})
	}
	r := s.Report()
	if want := (Latency{Samples: 100, P50: 50, P90: 90, P99: 99}); r.Latency != want {
		t.Errorf("latency = %+v, want %+v", r.Latency, want)
	}
	if len(r.Failures) != statsFailures {
		t.Errorf("failures kept = %d, want %d", len(r.Failures), statsFailures)
	}
	for i := 0; i < 3*statsReservoir; i++ {
		s.Observe(middleware.Event{Status: repair.StatusValid, Latency: time.Second})
	}
	if r := s.Report(); r.Latency.Samples != statsReservoir || r.Latency.P99 != 1000 {
		t.Errorf("latency after many = %+v", r.Latency)
	}
	if r := s.Report(); r.Cache.HitRate != 0 || r.Cache.Bypass != 100 {
		t.Errorf("cache = %+v", r.Cache)
	}
}

func TestAcceptedRung(t *testing.T) {
	tests := []struct {
		ev   middleware.Event
		want string
	}{
		{middleware.Event{Status: "valid", Rungs: []string{"local"}}, "first"},
		{middleware.Event{Status: "repaired", Rungs: []string{"local"}}, "local"},
		{middleware.Event{Status: "repaired", Rungs: []string{"local", "llm_repair_scoped", "merge"}}, "llm_repair"},
		{middleware.Event{Status: "repaired", Rungs: []string{"local", "llm_repair", "partial_regeneration"}}, "regeneration"},
		{middleware.Event{Status: "repaired", Rungs: []string{"local", "llm_repair", "rerun:0.3"}}, "rerun"},
		{middleware.Event{Status: "fallback", Rungs: []string{"local", "fallback:best_effort"}}, "fallback:best_effort"},
		{middleware.Event{Status: "repaired", CacheHit: true}, "cache"},
		{middleware.Event{Status: "error"}, "error"},
	}
	for _, tt := range tests {
		if got := AcceptedRung(tt.ev); got != tt.want {
			t.Errorf("AcceptedRung(%v) = %q, want %q", tt.ev.Rungs, got, tt.want)
		}
	}
}
