//go:build clp

package ilp_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/require"
)

// TestCLPSiaShaped checks the solver's optimum against the CLP relaxation on
// Sia-shaped instances at 64, 512 and 2048 GPUs: the LP bound holds and the
// integrality gap is small.
func TestCLPSiaShaped(t *testing.T) {
	for _, c := range []ilptest.Config{
		{Scale: 1, Jobs: 30, Power: -0.5, PinFrac: 0.1, Seed: 11},
		{Scale: 8, Jobs: 300, Power: 0.5, PinFrac: 0.05, Seed: 12},
		{Scale: 32, Jobs: 1500, Power: -0.5, PinFrac: 0.05, Seed: 13},
		{Scale: 32, Jobs: 300, Power: 0.5, PinFrac: 0.05, Seed: 14},
	} {
		p := ilptest.Generate(c)
		rel, err := ilp.RelaxCLP(p)
		require.NoError(t, err)
		sol, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, sol.Status)
		gap := rel.Bound - sol.Objective
		if p.Sense == ilp.Minimize {
			gap = -gap
		}
		require.GreaterOrEqual(t, gap, -1e-6, "%+v: optimum %v beyond the LP bound %v", c, sol.Objective, rel.Bound)
		require.Less(t, gap, 1.0, "%+v: integrality gap", c)
		t.Logf("%+v: LP %.6f optimum %.6f", c, rel.Bound, sol.Objective)
	}
}

// TestCLPNewtonBound checks the smoothed Newton method's bound (the root's
// under a tight deadline) against the CLP relaxation on the hard corpus's
// rounds of 1,000 and 1,500 jobs: it is on the valid side of the best
// assignment a 200 ms solve finds, and within 1e-4 of the LP optimum (the
// model drops options too large for a capacity alone, which the LP may use
// fractionally: the bound may be tighter than CLP's, never looser by more).
func TestCLPNewtonBound(t *testing.T) {
	for _, c := range ilptest.HardCorpus() {
		if c.Jobs > 1500 {
			continue
		}
		p := ilptest.Hard(c)
		rel, err := ilp.RelaxCLP(p)
		require.NoError(t, err)
		nb := ilp.NewtonBound(p, 40)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		sol, err := ilp.Solve(ctx, p, nil)
		cancel()
		require.NoError(t, err)
		s := 1.0
		if p.Sense == ilp.Minimize {
			s = -1
		}
		t.Logf("%s: Newton %.9g CLP %.9g incumbent %.9g", c.Name(), nb, rel.Bound, sol.Objective)
		require.GreaterOrEqual(t, s*nb, s*sol.Objective, "%s: the bound cuts off an assignment", c.Name())
		require.LessOrEqual(t, s*(nb-rel.Bound), 1e-4*math.Abs(rel.Bound), "%s: looser than the LP", c.Name())
	}
}
