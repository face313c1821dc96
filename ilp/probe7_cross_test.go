package ilp_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbe7CrossBounds: on rounds too large for an exact twin, solves cut
// at every point (a stepped clock: steps of 1 µs to 1 ms at every look,
// deadlines from expired to 20 ms, cold and warm-started) must agree:
// every solve's Bound admits every other solve's feasible objective, so no
// cut path reports a bound that is not one, and every Optimal answer is
// the best objective any solve found (within the grid step or tolerance).
func TestProbe7CrossBounds(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("seconds of solves")
	}
	for _, c := range []struct {
		name string
		p    *ilp.Problem
	}{
		{"hard round", hardRound()},
		{"5000 identical jobs", bigShape7("5000 identical jobs")},
		{"60 types", bigShape7("60 types, 300 jobs")},
		{"a quota per job", bigShape7("5000 jobs, a quota per job")},
		{"30 nested quotas", bigShape7("3000 jobs, 30 nested quotas")},
	} {
		p := c.p
		sign := 1.0
		if p.Sense == ilp.Minimize {
			sign = -1
		}
		bestObj, bestBound := math.Inf(-1), math.Inf(1) // in maximisation terms
		var optimal []float64
		var warm []int
		n := 0
		for _, step := range []time.Duration{time.Microsecond, 10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
			for _, d := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
				for _, warmed := range []bool{false, true} {
					var s *ilp.Settings
					if warmed {
						s = &ilp.Settings{WarmStart: warm}
					}
					sol, _, err := ilp.SteppedSolve(p, d, step, s)
					require.NoError(t, err, c.name)
					require.NoError(t, p.Check(sol.Assignment), c.name)
					bestObj = math.Max(bestObj, sign*sol.Objective)
					bestBound = math.Min(bestBound, sign*sol.Bound)
					if sol.Status == ilp.Optimal {
						optimal = append(optimal, sign*sol.Objective)
					}
					if !warmed {
						warm = sol.Assignment
					}
					n++
				}
			}
		}
		tol := 1e-9 * math.Max(1, math.Abs(bestObj))
		assert.GreaterOrEqual(t, bestBound, bestObj-tol, "%s: a bound below a feasible objective", c.name)
		for _, o := range optimal {
			allow := tol
			if p.Grid > 0 {
				allow = p.Grid
			}
			assert.GreaterOrEqual(t, o, bestObj-allow, "%s: an optimal answer below a feasible one", c.name)
		}
		t.Logf("%s: %d solves, %d optimal, best objective %.8g, least bound %.8g", c.name, n, len(optimal), sign*bestObj, sign*bestBound)
	}
}
