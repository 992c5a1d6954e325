package validators_test

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling thread has used, so that a
// benchmark locked to its thread counts its own work and not that of
// the other processes sharing the machine.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
