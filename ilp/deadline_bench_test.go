package ilp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// BenchmarkSolveDeadline times Solve on the largest instances of the hard
// corpus under a deadline of d, and reports the mean overshoot past it and
// the relative gap; examples/ilp-deadline measures the whole corpus.
func BenchmarkSolveDeadline(b *testing.B) {
	corpus := ilptest.HardCorpus()
	for _, c := range []ilptest.HardConfig{corpus[0], corpus[len(corpus)-1]} {
		p := ilptest.Hard(c)
		for _, d := range []time.Duration{0, 5 * time.Millisecond, 100 * time.Millisecond} {
			b.Run(fmt.Sprintf("%s/d=%v", c.Name(), d), func(b *testing.B) {
				var over time.Duration
				gap := 0.0
				for i := 0; i < b.N; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), d)
					dl, _ := ctx.Deadline()
					sol, err := ilp.Solve(ctx, p, nil)
					over += max(0, time.Since(dl))
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					gap += sol.Gap() / max(1e-300, abs(sol.Bound))
				}
				b.ReportMetric(float64(over.Microseconds())/float64(b.N), "µs-over")
				b.ReportMetric(gap/float64(b.N), "gap")
			})
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
