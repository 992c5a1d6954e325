package middleware

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestProgressiveStreamKeepAliveWhileRepairing: while a released item's
// successor waits on a slow repair call, keep-alives go on at the
// interval, so the stream is never silent longer than the interval from
// its first byte to its end.
func TestProgressiveStreamKeepAliveWhileRepairing(t *testing.T) {
	tests := []struct {
		name        string
		interval    time.Duration
		repairDelay time.Duration
		// wantDuringRepair is the least number of keep-alives written
		// while the repair call runs (question 3 closes at 3 s).
		wantDuringRepair int
	}{
		{"half-second keep-alive, two-second repair", 500 * time.Millisecond, 2 * time.Second, 3},
		{"one-second keep-alive, two-second repair", time.Second, 2 * time.Second, 1},
		{"quarter-second keep-alive, one-second repair", 250 * time.Millisecond, time.Second, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				chunks, good := mcqChunks(t, func(qs []*strictjson.Value) { qs[2].Set("answer", strictjson.Int(9)) })
				up := &itemUpstream{chunks: chunks, repairDelay: tt.repairDelay,
					repair: `{"questions[2]":` + string(strictjson.Marshal(good[2])) + `}`}
				r := serveStreamEvery(t, up, nil, false, tt.interval)
				if len(r.writes) == 0 {
					t.Fatal("nothing was written")
				}
				last := r.events[len(r.events)-1]
				if last.kind != "end" {
					t.Fatalf("stream ends with %s, want end", last.kind)
				}
				repairEnd := 3*time.Second + tt.repairDelay
				during, longest := 0, time.Duration(0)
				for i, w := range r.writes {
					if i > 0 {
						longest = max(longest, w.at-r.writes[i-1].at)
					}
					if w.data != "text\n" && w.data != "end\n" && w.at > 3*time.Second && w.at < repairEnd {
						during++
					}
				}
				if during < tt.wantDuringRepair {
					t.Errorf("%d keep-alives while the repair call ran (3s to %v), want at least %d; writes %v", during, repairEnd, tt.wantDuringRepair, r.writes)
				}
				if longest > tt.interval {
					t.Errorf("longest silence %v, want at most the interval %v", longest, tt.interval)
				}
				if up.repairs != 1 {
					t.Errorf("%d repair calls, want 1", up.repairs)
				}
			})
		})
	}
}
