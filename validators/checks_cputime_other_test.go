//go:build !linux

package validators_test

import "time"

var start = time.Now()

// threadCPU is the time since the tests started where the thread's CPU
// time cannot be read.
func threadCPU() time.Duration { return time.Since(start) }
