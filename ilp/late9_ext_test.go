package ilp_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestExpiredPathAllocatesOnce: past an expired deadline on thousands of
// listed quotas, Solve allocates what the input's size justifies once:
// the quota index and the per-job lists of the listed quotas in one pass
// (not the index for the pins' check, again for the admission, and the
// usages' per-job arrays for each pass), no index at all without pins.
// Before, "5000 jobs, a quota per job" allocated 1.07 MB per warm-started
// solve (71 bytes per job, quota and list entry), and that path's CPU
// past an expired deadline came to 1.0-2.2 ms against the 2 ms allowance;
// now 0.62 MB.
func TestExpiredPathAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	p := bigShape7("5000 jobs, a quota per job")
	units := len(p.Jobs) + len(p.Quotas)
	for _, q := range p.Quotas {
		units += len(q.Jobs)
	}
	sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{TimeLimit: time.Second})
	require.NoError(t, err)
	for _, warm := range [][]int{nil, sol.Assignment} {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		var m0, m1 runtime.MemStats
		const solves = 4
		runtime.ReadMemStats(&m0)
		for range solves {
			got, err := ilp.Solve(ctx, p, &ilp.Settings{WarmStart: warm})
			require.NoError(t, err)
			require.NoError(t, p.Check(got.Assignment))
		}
		runtime.ReadMemStats(&m1)
		cancel()
		perUnit := float64(m1.TotalAlloc-m0.TotalAlloc) / solves / float64(units)
		t.Logf("warm %v: %.1f bytes per job, quota and list entry", warm != nil, perUnit)
		assert.LessOrEqual(t, perUnit, 48.0, "warm %v: bytes allocated per job, quota and list entry past an expired deadline", warm != nil)
	}
}
