package ilp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// TestTightPathLargestQuotaRound: on the hard corpus's 5,000-job quota
// round, the first pass of the Newton dual over every job starts near
// the minimum (it takes its first steps on a sample: 1.3e-1 from λ = 0
// without one), and marginalGreedy at the minimum's multipliers, pricing
// the quota rows it climbs, loses little of the bound.
func TestTightPathLargestQuotaRound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 5,000-job round")
	}
	corpus := ilptest.HardCorpus()
	p := ilptest.Hard(corpus[len(corpus)-2]) // 5,000 jobs, p = −0.5, quotas
	first := ilp.NewtonFirstFullPass(p)
	t.Logf("first full pass %.3g", first)
	assert.GreaterOrEqual(t, first, -1e-9, "a bound")
	assert.LessOrEqual(t, first, 2e-3, "the first pass over every job")
	loss := ilp.MarginalGreedyLoss(p)
	t.Logf("marginalGreedy's loss %.3g", loss)
	require.False(t, loss != loss, "infeasible")
	assert.GreaterOrEqual(t, loss, -1e-9)
	assert.LessOrEqual(t, loss, 5e-4, "marginalGreedy at the dual's multipliers (5.8e-4 without the quota prices)")
}
