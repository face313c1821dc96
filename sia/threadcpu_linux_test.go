package sia

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time of the calling thread (lock it with
// runtime.LockOSThread): unlike wall time, it does not grow with the
// machine's load.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
