package outcomes

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkSQLiteWrite times one batch of DefaultBatch records written to
// SQLite, what the Writer does once a second under load; its cost is CPU
// the requests do not get.
func BenchmarkSQLiteWrite(b *testing.B) {
	b.ReportAllocs()
	s, err := OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "o.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	recs := sample(DefaultBatch)
	n := 0
	for b.Loop() {
		n++
		for i := range recs {
			recs[i].ID = fmt.Sprintf("r%d-%d", n, i)
		}
		if err := s.Write(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
}
