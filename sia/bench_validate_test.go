package sia

import (
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"
)

// BenchmarkValidateFleet measures snapshot validation alone (Round's,
// placed) on the 5,000-job fleets of examples/round-deadline, in CPU time
// of the benchmark's thread per call (cpu-µs/op), with Options.Parallelism
// 0 and 2 (ns/op is wall time: with 2 it uses another core), and the
// least CPU time of one call (min-cpu-µs: the call least disturbed by the
// machine's other work, which shares the caches).
func BenchmarkValidateFleet(b *testing.B) {
	for _, c := range []placeFleet{{5000, 8000, 6, 4}, {5000, 16000, 8, 5}} {
		snap := fleetSnapshot(b, c)
		for _, par := range []int{0, 2} {
			b.Run(fmt.Sprintf("gpus=%d/par=%d", c.GPUs, par), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				o := (&Options{Parallelism: par}).WithDefaults()
				b.ReportAllocs()
				b.ResetTimer()
				var total time.Duration
				least := time.Duration(math.MaxInt64)
				for i := 0; i < b.N; i++ {
					t0, _ := threadCPU()
					if _, err := validateSnapshot(&snap, &o, true); err != nil {
						b.Fatal(err)
					}
					t1, _ := threadCPU()
					total += t1.Since(t0)
					least = min(least, t1.Since(t0))
				}
				b.ReportMetric(float64(total.Microseconds())/float64(b.N), "cpu-µs/op")
				b.ReportMetric(float64(least.Nanoseconds())/1e3, "min-cpu-µs")
			})
		}
	}
}
