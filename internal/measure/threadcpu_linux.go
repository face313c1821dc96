package measure

import (
	"syscall"
	"time"
	"unsafe"
)

// ThreadCPUAvailable says whether ThreadCPU and ThreadCPUOf work here
// (Linux); without them the tests that need them skip.
const ThreadCPUAvailable = true

// ThreadID is the calling thread's id (lock the goroutine to its thread
// with runtime.LockOSThread first).
func ThreadID() int { return syscall.Gettid() }

// ThreadCPU is the CPU time of the calling thread
// (CLOCK_THREAD_CPUTIME_ID), 0 when it cannot be read.
func ThreadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// ThreadCPUOf is the CPU time of thread tid, read from any thread through
// the thread's CPU-time clock (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)),
// 0 when it cannot be read.
func ThreadCPUOf(tid int) time.Duration {
	var ts syscall.Timespec
	id := uintptr(int32(^uint32(tid)<<3 | 6))
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
