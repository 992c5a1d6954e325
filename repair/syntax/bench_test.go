package syntax

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/internal/faultgen"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func BenchmarkRepairSyntax(b *testing.B) {
	run := func(name string, in []byte) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Repair(in, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, size := range []int{1 << 10, 10 << 10, 100 << 10, 1 << 20} {
		run(fmt.Sprintf("broken/%dKB", size>>10), faultgen.BrokenDoc(size, faultgen.TypicalItems))
	}
	run("dense/100KB", faultgen.BrokenDoc(100<<10, faultgen.DenseItems))
}

// BenchmarkRepairSyntaxValid compares the fast path on valid input with
// encoding/json.Valid on the same bytes; the difference is the UTF-8 check
// and the copy of the result.
func BenchmarkRepairSyntaxValid(b *testing.B) {
	r, err := Repair(faultgen.BrokenDoc(100<<10, faultgen.TypicalItems), Options{})
	if err != nil || !json.Valid(r.Text) {
		b.Fatalf("building the valid input: %v", err)
	}
	in := r.Text
	b.Run("RepairSyntax/100KB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Repair(in, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid/100KB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(in) {
				b.Fatal("invalid")
			}
		}
	})
	// The yardstick: repair of valid input costs no more than 1.2×
	// the strict parse the pipeline runs anyway.
	b.Run("strictjson.Parse/100KB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := strictjson.Parse(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBrokenDocRepairs keeps the benchmark inputs honest: they must need
// repair, repair must succeed, and no item may be lost.
func TestBrokenDocRepairs(t *testing.T) {
	tests := []struct {
		name  string
		items []string
	}{
		{name: "typical", items: faultgen.TypicalItems},
		{name: "dense", items: faultgen.DenseItems},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := faultgen.BrokenDoc(10<<10, tt.items)
			r, err := Repair(in, Options{})
			if err != nil || r.Truncated || !json.Valid(r.Text) || len(r.Changes) < 50 {
				t.Fatalf("Repair(brokenDoc) = %d changes, truncated %v, err %v, valid %v", len(r.Changes), r.Truncated, err, json.Valid(r.Text))
			}
			var doc struct {
				LinkPlan []map[string]any `json:"link_plan"`
			}
			if err := json.Unmarshal(r.Text, &doc); err != nil {
				t.Fatal(err)
			}
			if got, want := len(doc.LinkPlan), strings.Count(string(in), "\n    {")+strings.Count(string(in), "], {"); got != want {
				t.Errorf("Repair(brokenDoc) kept %d items, want %d", got, want)
			}
		})
	}
}
