package ilp_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// rowsSolve7 solves p three times under deadline d on the solving thread's
// CPU clock and returns the least CPU past D and the most bytes allocated.
func rowsSolve7(t *testing.T, p *ilp.Problem, d time.Duration) (time.Duration, uint64) {
	t.Helper()
	least, most := time.Duration(math.MaxInt64), uint64(0)
	var ms runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&ms)
		a0 := ms.TotalAlloc
		over, _, sol, err := ilp.TraceSolve(p, d, nil)
		runtime.ReadMemStats(&ms)
		require.NoError(t, err)
		require.NoError(t, p.Check(sol.Assignment))
		require.GreaterOrEqual(t, sol.Bound, sol.Objective)
		least, most = min(least, over), max(most, ms.TotalAlloc-a0)
	}
	return least, most
}

// TestProbe7NewtonManyRows: 5,000 jobs with a quota each (5,002 coupling
// rows, an input of about 1 MB) under a deadline short for the problem:
// the root's dual was newtonDual's, whose passes keep a rows × rows Hessian
// (193 MB allocated) and whose steps factor it (200 ms of CPU past a 10-50
// ms deadline). The solve now allocates a few MB.
func TestProbe7NewtonManyRows(t *testing.T) {
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	p := bigShape7("5000 jobs, a quota per job")
	_, most := rowsSolve7(t, p, 20*time.Millisecond)
	t.Logf("allocated at most %d MB", most>>20)
	assert.Less(t, most, uint64(64<<20), "bytes allocated by a solve")
}
