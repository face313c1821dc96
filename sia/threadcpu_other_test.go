//go:build !linux

package sia

import "time"

// threadCPU is not available: tests that need it skip.
func threadCPU() (time.Duration, bool) { return 0, false }
