package stats

import (
	"fmt"
	"testing"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/repair"
)

func TestModelLabels(t *testing.T) {
	l := NewModelLabels(3)
	tests := []struct{ in, want string }{
		{"a", "a"}, {"b", "b"}, {"", ""}, {"a", "a"}, {"c", "c"}, {"d", OtherModel}, {"e", OtherModel}, {"b", "b"}, {"", ""},
	}
	for _, tt := range tests {
		if got := l.Label(tt.in); got != tt.want {
			t.Errorf("Label(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestStatsModelBound counts requests of more models than MaxModels: the
// stats keep MaxModels rows of their own and one "other" row.
func TestStatsModelBound(t *testing.T) {
	s := New(nil)
	for i := range MaxModels + 10 {
		s.Observe(middleware.Event{Contract: "c", Model: fmt.Sprintf("m%d", i), Status: repair.StatusValid})
	}
	rows := map[string]bool{}
	for _, c := range s.Report().Counts {
		rows[c.Model] = true
	}
	if len(rows) != MaxModels+1 || !rows[OtherModel] {
		t.Errorf("stats rows by model = %d (other %v), want %d and other", len(rows), rows[OtherModel], MaxModels+1)
	}
}
