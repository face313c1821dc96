package ilp_test

import (
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/require"
)

// TestNewtonDualCorpus: on the hard corpus's rounds of 1,000 and 2,500
// jobs, the smoothed Newton method comes within 2e-5 of the dual's
// minimum in at most 25 passes over the jobs (the cutting-plane method
// needs about fifty evaluations to come within 1e-4).
func TestNewtonDualCorpus(t *testing.T) {
	for _, c := range ilptest.HardCorpus() {
		if c.Jobs > 2500 || testing.Short() && c.Jobs > 1000 {
			continue
		}
		excess, passes := ilp.NewtonDualExcess(ilptest.Hard(c), 25)
		t.Logf("%s: %.2e above the minimum after %d passes", c.Name(), excess, passes)
		require.GreaterOrEqual(t, excess, -1e-9, "%s: below the minimum", c.Name())
		require.LessOrEqual(t, excess, 2e-5, c.Name())
	}
}
