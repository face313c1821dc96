package ilp_test

import (
	"runtime"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
)

// BenchmarkDPCost measures the knapsack programs sized by the clock's
// affords on the hard corpus's smaller rounds, on fresh tables each time
// (as in a solve), cold (after a collection, which also evicts the caches
// of the heap it walks) and warm (straight after another run): the
// solving thread's CPU per run, and the ratio of it to the nanoseconds
// their size checks estimated (over 1: the check under-estimates).
func BenchmarkDPCost(b *testing.B) {
	if !measure.ThreadCPUAvailable {
		b.Skip("needs a per-thread CPU clock")
	}
	for _, c := range ilptest.HardCorpus()[:4] {
		p := ilptest.Hard(c)
		for _, prog := range ilp.DPPrograms(p) {
			for _, cold := range []bool{true, false} {
				name := c.Name() + "/" + prog.Name + "/warm"
				if cold {
					name = c.Name() + "/" + prog.Name + "/cold"
				}
				b.Run(name, func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					var cpu, est float64
					for range b.N {
						if cold {
							runtime.GC()
						} else {
							prog.Run()
						}
						c, e := prog.Run()
						cpu += float64(c)
						est += float64(e)
					}
					b.ReportMetric(cpu/float64(b.N)/1e3, "cpu-µs/op")
					if est > 0 {
						b.ReportMetric(cpu/est, "real/est")
					}
				})
			}
		}
	}
}
