package pollux

import (
	"syscall"
	"testing"
	"time"
)

// cpuTimer reports a benchmark's process CPU time per operation (user +
// system, all threads) as cpu-ns/op: on a shared, loaded machine it varies
// far less than wall time.
type cpuTimer struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) *cpuTimer {
	b.ResetTimer()
	return &cpuTimer{start: processCPU()}
}

func (c *cpuTimer) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
}
