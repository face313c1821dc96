package ilp_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// TestProbe5BoundsUnderLimits: on hard-corpus-shaped problems of 60-400
// jobs (too large for brute force), every solve stopped early (an expired
// ctx, deadlines of 50 µs to 5 ms, MaxNodes 1 to 50, both) returns a
// feasible assignment whose Bound admits every objective any solve of the
// same problem found, and whose objective no Bound excludes; an Optimal
// answer is within the tolerance (or grid step) of the best one found.
func TestProbe5BoundsUnderLimits(t *testing.T) {
	n := 16
	if testing.Short() || raceEnabled {
		n = 4
	}
	type run struct {
		name string
		sol  ilp.Solution
	}
	for it := 0; it < n; it++ {
		c := ilptest.HardConfig{Jobs: 60 + 23*it, GPUs: 120 + 31*it, Types: 3 + it%4, Seed: uint64(500 + it),
			Power: []float64{-0.5, 0.5}[it%2], PinFrac: 0.1, Quotas: it%3 != 0}
		p := ilptest.Hard(c)
		require.NoError(t, p.Validate(), c.Name())
		var runs []run
		solve := func(name string, ctx context.Context, s *ilp.Settings) {
			sol, err := ilp.Solve(ctx, p, s)
			require.NoError(t, err, "%s %s", c.Name(), name)
			require.NoError(t, p.Check(sol.Assignment), "%s %s", c.Name(), name)
			require.Equal(t, p.Objective(sol.Assignment), sol.Objective)
			require.False(t, math.IsNaN(sol.Bound), "%s %s", c.Name(), name)
			runs = append(runs, run{name, sol})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		solve("10 s", ctx, nil)
		cancel()
		expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
		solve("expired", expired, nil)
		solve("expired, MaxNodes 1", expired, &ilp.Settings{MaxNodes: 1})
		cancel()
		for _, d := range []time.Duration{50 * time.Microsecond, time.Millisecond, 5 * time.Millisecond} {
			solve(fmt.Sprint("TimeLimit ", d), context.Background(), &ilp.Settings{TimeLimit: d})
			solve(fmt.Sprint("TimeLimit ", d, ", warm"), context.Background(), &ilp.Settings{TimeLimit: d, WarmStart: runs[0].sol.Assignment})
		}
		for _, m := range []int{1, 3, 50} {
			solve(fmt.Sprint("MaxNodes ", m), context.Background(), &ilp.Settings{MaxNodes: m})
			solve(fmt.Sprint("MaxNodes ", m, ", TimeLimit 1ms"), context.Background(), &ilp.Settings{MaxNodes: m, TimeLimit: time.Millisecond})
		}
		scale := 1.0
		for _, j := range p.Jobs {
			scale = math.Max(scale, math.Abs(j.Unallocated))
			for _, o := range j.Options {
				scale = math.Max(scale, math.Abs(o.Value))
			}
		}
		noise := 2e-12 * scale * float64(len(p.Jobs)+1)
		tol := 1e-9 * scale
		if p.Grid > 0 {
			tol = p.Grid
		}
		better := func(a, b float64) bool { // a better than b beyond the noise
			if p.Sense == ilp.Maximize {
				return a > b+noise
			}
			return a < b-noise
		}
		best := runs[0].sol.Objective
		for _, r := range runs {
			if better(r.sol.Objective, best) {
				best = r.sol.Objective
			}
		}
		optimal := 0
		for _, r := range runs {
			for _, o := range runs {
				assert.False(t, better(o.sol.Objective, r.sol.Bound), "%s: %s's bound %v excludes %s's objective %v", c.Name(), r.name, r.sol.Bound, o.name, o.sol.Objective)
			}
			if r.sol.Status == ilp.Optimal {
				optimal++
				assert.False(t, better(best, r.sol.Objective+map[bool]float64{true: tol, false: -tol}[p.Sense == ilp.Maximize]),
					"%s: %s optimal %v, but %v was found", c.Name(), r.name, r.sol.Objective, best)
			}
		}
		t.Logf("%s: %d jobs, %s, %d/%d optimal, best %v", c.Name(), len(p.Jobs), runs[0].sol.Status, optimal, len(runs), best)
	}
}
