// Package benchload holds what the side-by-side benchmark programs under
// bench/ share: their start (flags, command line, a fake upstream
// answering at once), timing one request after another, throughput at a
// concurrency, percentiles, a process's resident memory, one request and
// its figures, the table that weighs targets against the first, and a
// throwaway redis-server.
package benchload

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contractgateway/gateway/internal/redistest"
)

// Warmup is how many calls Sequential makes before it starts timing:
// connections, caches and the runtime settle first.
const Warmup = 100

// Sequential calls do Warmup+n times, one after another, and returns the
// durations of the last n.
func Sequential(n int, do func()) []time.Duration {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n+Warmup; i++ {
		start := time.Now()
		do()
		if i >= Warmup {
			out = append(out, time.Since(start))
		}
	}
	return out
}

// Throughput calls do from c goroutines for d and returns the calls per
// second.
func Throughput(c int, d time.Duration, do func()) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Go(func() {
			for ctx.Err() == nil {
				do()
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds()
}

// Percentile returns the p-th percentile of ds, in milliseconds; 0 when
// ds is empty (a run that timed nothing).
func Percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i]) / float64(time.Millisecond)
}

// RSS returns the resident set size of process pid in KiB, read from
// /proc/PID/status; 0 when it cannot be read.
func RSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

// StartRedis runs redis-server on a free loopback port, without
// persistence, until stop is called.
func StartRedis() (addr string, stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, fmt.Errorf("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir, err := os.MkdirTemp("", "bench-redis")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait(); os.RemoveAll(dir) }
	for range 100 {
		if redistest.Ping(addr) {
			return addr, stop, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("redis-server did not answer on %s", addr)
}
