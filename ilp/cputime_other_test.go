//go:build !linux

package ilp

import "time"

// Without a per-thread CPU clock the deadline tests that need one skip.
const threadCPUClock = false

func threadID() int               { return 0 }
func threadCPU() time.Duration    { return 0 }
func cpuOf(tid int) time.Duration { return 0 }
