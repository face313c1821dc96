//go:build !linux

package measure

import "time"

// ThreadCPUAvailable says whether ThreadCPU and ThreadCPUOf work here: not
// on this system, where they return 0 and the tests that need them skip.
const ThreadCPUAvailable = false

// ThreadID is 0: no thread CPU clock here.
func ThreadID() int { return 0 }

// ThreadCPU is 0: no thread CPU clock here.
func ThreadCPU() time.Duration { return 0 }

// ThreadCPUOf is 0: no thread CPU clock here.
func ThreadCPUOf(int) time.Duration { return 0 }
