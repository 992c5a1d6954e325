package sqlstore

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/contractgateway/gateway/gateway/outcomes"
)

// benchPrefill is how many records the store holds before a benchmark
// times its writes: a store a day or a week old, whose keys no longer fit
// a few pages, not an empty file.
const benchPrefill = 100_000

// BenchmarkSQLiteWrite times batches of records written to SQLite
// holding benchPrefill records already, what the Writer does under load;
// its cost is CPU the requests do not get. The records are what the
// soak's requests leave: random request ids, as the gateway makes them,
// and times a few microseconds apart. Sizes around DefaultBatch show what
// a commit costs besides its records.
func BenchmarkSQLiteWrite(b *testing.B) {
	for _, batch := range []int{256, outcomes.DefaultBatch, 4096} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "o.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			at := time.Now().UTC().Truncate(time.Second)
			next := func(n int) []outcomes.Record {
				recs := benchRecords(n, at)
				at = at.Add(time.Second)
				return recs
			}
			for range benchPrefill / 1000 {
				if err := s.Write(ctx, next(1000)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				recs := next(batch)
				b.StartTimer()
				if err := s.Write(ctx, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N*batch), "µs/record")
		})
	}
}

// benchRecords are n records of valid answers, a microsecond apart from
// at, each with a random 32-hex-digit id.
func benchRecords(n int, at time.Time) []outcomes.Record {
	out := make([]outcomes.Record, n)
	for i := range out {
		var id [16]byte
		binary.LittleEndian.PutUint64(id[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
		out[i] = outcomes.Record{ID: hex.EncodeToString(id[:]), Time: at.Add(time.Duration(i) * time.Microsecond),
			Route: "generate", Contract: "json@1", Model: "stories", Upstream: "http://127.0.0.1:11434", Status: "valid",
			CodesBefore: []string{}, CodesAfter: []string{}, Rungs: []string{}, Tokens: outcomes.Tokens{FirstPrompt: 26, FirstOutput: 12},
			LatencyMS: 0.5, Cache: "bypass"}
	}
	return out
}
