package outcomes

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/contractgateway/gateway/internal/pgtest"
)

// TestMeasureOutage measures, in real time, what a Writer with its
// defaults keeps of the records of a PostgreSQL outage under light load:
// 5 records/s for 40s, the database stopped from 10s to 30s, the records
// counted 10s after it is back. It takes 40s, so it runs only with
// CG_MEASURE_OUTAGE=1.
func TestMeasureOutage(t *testing.T) {
	if os.Getenv("CG_MEASURE_OUTAGE") != "1" {
		t.Skip("set CG_MEASURE_OUTAGE=1 to measure (40s)")
	}
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	s := mustOpen(t, func(ctx context.Context) (Store, error) { return OpenPostgres(ctx, dsn) })
	w := NewWriter(s, WriterConfig{Retention: -1})
	defer w.Close(context.Background())
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	var added, inOutage int
	stopped, restarted := false, false
	for now := range tick.C {
		el := now.Sub(start)
		if el >= 40*time.Second {
			break
		}
		if el >= 10*time.Second && !stopped {
			pg.Stop()
			stopped = true
		}
		if el >= 30*time.Second && !restarted {
			pg.Restart(t)
			restarted = true
		}
		if el < 30*time.Second {
			w.Add(Record{ID: fmt.Sprintf("m-%05d", added), Time: time.Now().UTC().Truncate(time.Microsecond), Status: "valid",
				CodesBefore: []string{}, CodesAfter: []string{}, Rungs: []string{}})
			added++
			if stopped {
				inOutage++
			}
		}
	}
	var listed int
	q := Query{Limit: MaxLimit}
	for {
		page, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		listed += len(page.Records)
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	t.Logf("added %d (%d during the 20s outage), listed %d 10s after the restart: %d missing",
		added, inOutage, listed, added-listed)
}
