package ilp

import (
	"syscall"
	"time"
	"unsafe"
)

const threadCPUClock = true

// threadID is the calling thread's id.
func threadID() int { return syscall.Gettid() }

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// cpuOf is the CPU time of thread tid, read from any thread through its
// CPU-time clock (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
func cpuOf(tid int) time.Duration {
	var ts syscall.Timespec
	id := uintptr(int32(^uint32(tid)<<3 | 6))
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
