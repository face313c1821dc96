package ilp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestLateAdmitsUnderManyQuotaLists: a solve out of time on 5,000 quotas
// of one job each (5,000 list entries) still admits jobs on the free
// capacity, cold or warm-started, every time: the late admission's per-job
// quota lists are built whatever the clock at that size. Before, the
// lists waited for time left before greedyEnd, which a validation ending
// past D never leaves, and such solves ran nothing.
func TestLateAdmitsUnderManyQuotaLists(t *testing.T) {
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	p := bigShape7("5000 jobs, a quota per job")
	for _, d := range []time.Duration{0, time.Microsecond, time.Millisecond} {
		for rep := range 3 {
			_, _, sol, err := ilp.TraceSolve(p, d, nil)
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			n := 0
			for _, k := range sol.Assignment {
				if k >= 0 {
					n++
				}
			}
			assert.Positive(t, n, "D %v, rep %d: a solve out of time ran no job on free capacity", d, rep)
		}
	}
}
