//go:build clp

package ilp_test

import (
	"context"
	"testing"

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
