package validators_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// BenchmarkChecks measures the semantic step alone on the same parsed
// document: the examples/contracts/mcq-cel checks against the built-in
// mcq rule pack (the schema is left out of both, so that the figures side
// by side are the rules' own).
func BenchmarkChecks(b *testing.B) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		b.Fatal(err)
	}
	mcq, _ := reg.Lookup("mcq@1")
	cs, err := contracts.LoadPath(filepath.Join("..", "examples", "contracts", "mcq-cel"))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{2 << 10, 20 << 10} {
		text := mcqgen.Doc(size)
		doc, err := strictjson.ParseString(text)
		if err != nil {
			b.Fatal(err)
		}
		var run [2]func()
		for k, tc := range []struct {
			name string
			c    *contracts.Contract
		}{{"pack", mcq}, {"cel", cs[0]}} {
			c := *tc.c
			c.Schema = nil
			v, err := validators.New(&c, packs.Builtins())
			if err != nil {
				b.Fatal(err)
			}
			params, _ := v.Params(nil)
			if _, r := v.CheckDoc(doc, params); !r.Valid {
				b.Fatalf("%s: bench document invalid: %v", tc.name, r.Codes())
			}
			run[k] = func() { v.CheckDoc(doc, params) }
			b.Run(fmt.Sprintf("%dKB/%s", size>>10, tc.name), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					v.CheckDoc(doc, params)
				}
			})
		}
		// ratio runs the two in turn, in rounds long enough for the
		// thread's CPU clock, so that both meet the same machine, and
		// reports the CPU time each spends on the benchmark's thread
		// (other processes on a shared machine do not count) and the
		// checks' time and allocations over the pack's.
		rounds := 40 << 10 / size * 50
		b.Run(fmt.Sprintf("%dKB/ratio", size>>10), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var spent [2]time.Duration
			n := 0
			for b.Loop() {
				for k, f := range run {
					start := threadCPU()
					for range rounds {
						f()
					}
					spent[k] += threadCPU() - start
				}
				n += rounds
			}
			allocs := [2]float64{testing.AllocsPerRun(10, run[0]), testing.AllocsPerRun(10, run[1])}
			b.ReportMetric(float64(spent[0].Nanoseconds())/float64(n), "pack-cpu-ns/op")
			b.ReportMetric(float64(spent[1].Nanoseconds())/float64(n), "cel-cpu-ns/op")
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "time-x")
			b.ReportMetric(allocs[1]/allocs[0], "allocs-x")
		})
	}
}

// TestChecksAllocateNearThePack keeps the mcq-cel checks near the
// built-in mcq pack's allocations on the benchmark's 2 KB and 20 KB
// documents (they once made ten times as many, then 1.6 and 1.2 times
// as many before the rules were compiled into Go and the for_each
// checks stopped parsing their array's pointer each); the bound
// is twice the pack's.
func TestChecksAllocateNearThePack(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts vary under the race detector")
	}
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	mcq, _ := reg.Lookup("mcq@1")
	cs, err := contracts.LoadPath(filepath.Join("..", "examples", "contracts", "mcq-cel"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		size int
	}{{2 << 10}, {20 << 10}}
	for _, tt := range tests {
		doc, err := strictjson.ParseString(mcqgen.Doc(tt.size))
		if err != nil {
			t.Fatal(err)
		}
		allocs := func(c contracts.Contract) float64 {
			c.Schema = nil
			v, err := validators.New(&c, packs.Builtins())
			if err != nil {
				t.Fatal(err)
			}
			params, _ := v.Params(nil)
			return testing.AllocsPerRun(20, func() { v.CheckDoc(doc, params) })
		}
		pack, cel := allocs(*mcq), allocs(*cs[0])
		if cel > 1.2*pack {
			t.Errorf("%d KB: mcq-cel makes %.0f allocations, the mcq pack %.0f: %.2f×, want at most 1.2×", tt.size>>10, cel, pack, cel/pack)
		}
	}
}
