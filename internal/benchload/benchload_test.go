package benchload

import (
	"os"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		ds   []time.Duration
		p    float64
		want float64
	}{
		{"none", nil, 99, 0},
		{"one", []time.Duration{3 * ms}, 50, 3},
		{"p50 of four", []time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, 50, 2},
		{"p99 of four", []time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, 99, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.ds, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.ds, tt.p, got, tt.want)
			}
		})
	}
}

func TestRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if got := RSS(os.Getpid()); got <= 0 {
		t.Errorf("RSS(own pid) = %d KiB, want > 0", got)
	}
	if got := RSS(-1); got != 0 {
		t.Errorf("RSS(-1) = %d, want 0", got)
	}
}
