// Command syntax measures syntax.Repair side by side in one run: broken
// model output of 1 KB to 1 MB (the cost per byte should not grow with size),
// a fault-dense document, and valid input against encoding/json.Valid on the
// same bytes. It prints MB/s by wall time and by process CPU time; the CPU
// figure stays comparable when the machine is shared with other work, which
// inflates wall time but not the CPU a run consumes.
//
//	go run ./bench/syntax [-min 1s]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/contractgateway/gateway/internal/faultgen"
	"github.com/contractgateway/gateway/repair/syntax"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// result is one measured case.
type result struct {
	name       string
	bytes      int
	wall, cpu  time.Duration // per operation
	changes    int
	mbWall     float64
	mbCPU      float64
	nsByteCPU  float64
	iterations int
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func measure(name string, in []byte, min time.Duration, op func([]byte) int) result {
	changes := op(in) // warm up, and count what the input needs
	runtime.GC()
	n := 0
	w0, c0 := time.Now(), cpuTime()
	for time.Since(w0) < min || n < 3 {
		op(in)
		n++
	}
	wall, cpu := time.Since(w0)/time.Duration(n), (cpuTime()-c0)/time.Duration(n)
	mb := float64(len(in)) / 1e6
	return result{name: name, bytes: len(in), wall: wall, cpu: cpu, changes: changes, iterations: n,
		mbWall: mb / wall.Seconds(), mbCPU: mb / cpu.Seconds(), nsByteCPU: float64(cpu.Nanoseconds()) / float64(len(in))}
}

func main() {
	min := flag.Duration("min", time.Second, "minimum wall time per case")
	flag.Parse()

	repairOp := func(in []byte) int {
		r, err := syntax.Repair(in, syntax.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "syntax.Repair:", err)
			os.Exit(1)
		}
		return len(r.Changes)
	}
	var rs []result
	for _, size := range []int{1 << 10, 10 << 10, 100 << 10, 1 << 20} {
		rs = append(rs, measure(fmt.Sprintf("broken %dKB", size>>10), faultgen.BrokenDoc(size, faultgen.TypicalItems), *min, repairOp))
	}
	rs = append(rs, measure("dense 100KB", faultgen.BrokenDoc(100<<10, faultgen.DenseItems), *min, repairOp))
	fixed, err := syntax.Repair(faultgen.BrokenDoc(100<<10, faultgen.TypicalItems), syntax.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rs = append(rs, measure("valid 100KB syntax.Repair", fixed.Text, *min, repairOp))
	rs = append(rs, measure("valid 100KB json.Valid", fixed.Text, *min, func(in []byte) int {
		if !json.Valid(in) {
			os.Exit(1)
		}
		return 0
	}))
	rs = append(rs, measure("valid 100KB strict parse", fixed.Text, *min, func(in []byte) int {
		if _, err := strictjson.Parse(in); err != nil {
			os.Exit(1)
		}
		return 0
	}))

	fmt.Printf("%-26s %9s %8s %10s %10s %9s\n", "case", "bytes", "changes", "MB/s wall", "MB/s CPU", "ns/B CPU")
	for _, r := range rs {
		fmt.Printf("%-26s %9d %8d %10.1f %10.1f %9.2f\n", r.name, r.bytes, r.changes, r.mbWall, r.mbCPU, r.nsByteCPU)
	}
	fmt.Printf("\nlinearity: CPU per byte at 1MB / at 1KB = %.2f (1.00 is linear)\n", rs[3].nsByteCPU/rs[0].nsByteCPU)
	fmt.Printf("fast path: syntax.Repair / json.Valid CPU time on valid 100KB = %.2f\n", rs[5].nsByteCPU/rs[6].nsByteCPU)
	fmt.Printf("valid input: syntax.Repair / strict parse CPU time on valid 100KB = %.2f (target <= 1.2)\n", rs[5].nsByteCPU/rs[7].nsByteCPU)
	fmt.Printf("broken 100KB vs json.Valid on 100KB: %.1f× the CPU per byte\n", rs[2].nsByteCPU/rs[6].nsByteCPU)
}
