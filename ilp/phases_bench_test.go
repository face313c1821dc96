package ilp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// BenchmarkSolvePhases solves the hard corpus's 4,000- and 5,000-job instances with a
// 100 ms deadline on the solving thread's CPU clock (ilp.TraceSolve) and
// reports the CPU time of the phases before the search: validation
// (validate-cpu-ns) and the model's build (build-cpu-ns), from the trace's
// step ends, their sum (before-search-cpu-ns), and the mean relative gap
// |objective − bound| / |bound|. When the model is built in validation's
// pass (validateBuild: a deadline far enough), validate-cpu-ns includes
// the build and build-cpu-ns is what follows it (capping the rows).
func BenchmarkSolvePhases(b *testing.B) {
	if !ilp.ThreadCPUClock {
		b.Skip("no thread CPU clock on this system")
	}
	const d = 100 * time.Millisecond
	for _, c := range ilptest.HardCorpus() {
		if c.Jobs < 4000 {
			continue
		}
		p := ilptest.Hard(c)
		b.Run(strings.ReplaceAll(c.Name(), "+", ""), func(b *testing.B) {
			var validate, build time.Duration
			gap := 0.0
			for i := 0; i < b.N; i++ {
				_, steps, sol, err := ilp.TraceSolve(p, d, nil)
				if err != nil {
					b.Fatal(err)
				}
				at := map[string]time.Duration{}
				for _, s := range steps {
					at[s.Step] = s.CPU + d // since the call
				}
				v, okV := at["validate"]
				bu, okB := at["build"]
				if !okV || !okB {
					b.Fatalf("no validate or build step in the trace %v", steps)
				}
				validate += v
				build += bu - v
				gap += abs(sol.Gap()) / max(1e-300, abs(sol.Bound))
			}
			b.ReportMetric(float64(validate)/float64(b.N), "validate-cpu-ns")
			b.ReportMetric(float64(build)/float64(b.N), "build-cpu-ns")
			b.ReportMetric(float64(validate+build)/float64(b.N), "before-search-cpu-ns")
			b.ReportMetric(gap/float64(b.N), "gap")
		})
	}
}
