package ilp_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
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

// TestProbe7MasterManyRows: the same problem on the cutting-plane method
// (newtonDual takes at most 64 rows): its master program, a dense tableau
// over every row, was built whole at each iteration before it looked at
// the clock: 39 MB, and 34-46 ms of CPU past a 10 or 20 ms deadline. The
// master now moves at most 128 multipliers (the most over-used rows): the
// solve keeps within the contract, and with 50 ms it is proven optimal.
func TestProbe7MasterManyRows(t *testing.T) {
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	p := bigShape7("5000 jobs, a quota per job")
	for _, d := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond} {
		over, most := rowsSolve7(t, p, d)
		t.Logf("D %v: least CPU past D %v, allocated at most %d MB", d, over, most>>20)
		assert.Less(t, most, uint64(24<<20), "D %v: bytes allocated by a solve", d)
		if !raceEnabled {
			assert.LessOrEqual(t, over, ilp.Slack(d), "D %v: CPU past the deadline", d)
		}
	}
}

// TestProbe7ManyQuotasBruteForce: problems of a few jobs under 130-400
// quota rows (more than the master moves) are solved exactly: the
// brute-force optimum, with a true bound, under no deadline and MaxNodes 1.
func TestProbe7ManyQuotasBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	n := 300
	if testing.Short() || raceEnabled {
		n = 40
	}
	optimal := 0
	for it := 0; it < n; it++ {
		p := ilptest.Small(rng, 6, rng.IntN(2) == 0)
		p.Quotas = nil
		types := slices.Sorted(maps.Keys(p.Capacity))
		for q := 130 + rng.IntN(270); q > 0 && len(p.Jobs) > 0; q-- {
			qu := ilp.Quota{Name: fmt.Sprint("q", q), Limit: rng.IntN(7), MinGPUs: rng.IntN(3)}
			if rng.IntN(2) == 0 {
				qu.Type = types[rng.IntN(len(types))]
			}
			for _, i := range rng.Perm(len(p.Jobs))[:1+rng.IntN(min(3, len(p.Jobs)))] {
				qu.Jobs = append(qu.Jobs, i)
			}
			p.Quotas = append(p.Quotas, qu)
		}
		for i := range p.Jobs {
			p.Jobs[i].Pin = -1 // quotas drawn without regard to pins
		}
		require.NoError(t, p.Validate(), "it %d", it)
		_, want, ok := ilptest.BruteForce(p)
		require.True(t, ok)
		for _, s := range []*ilp.Settings{nil, {MaxNodes: 1}} {
			sol, err := ilp.Solve(context.Background(), p, s)
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			tol := 1e-9 * 4
			if p.Sense == ilp.Maximize {
				require.GreaterOrEqual(t, sol.Bound, want-tol, "it %d, %+v", it, s)
			} else {
				require.LessOrEqual(t, sol.Bound, want+tol, "it %d, %+v", it, s)
			}
			if sol.Status == ilp.Optimal {
				optimal++
				require.InDelta(t, want, sol.Objective, max(tol, p.Grid*(1-1e-9)), "it %d, %+v", it, s)
			} else {
				require.NotNil(t, s, "it %d: %v without a limit", it, sol.Status)
			}
		}
	}
	t.Logf("%d instances, %d optimal answers", n, optimal)
	assert.Greater(t, optimal, n)
}
