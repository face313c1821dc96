package shockwave

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

// TestShockwaveRun simulates a generated workload on both clusters: every
// job finishes at its requested size, the run is deterministic, and some
// rounds fall back from the fairness constraints.
func TestShockwaveRun(t *testing.T) {
	m, err := sim.LoadModel()
	require.NoError(t, err)
	for _, spec := range []string{"heterogeneous", "homogeneous"} {
		c, err := sim.ParseCluster(spec, 1)
		require.NoError(t, err)
		wl, err := sim.Generate(3, 8, 20)
		require.NoError(t, err)
		wl.Jobs = wl.Jobs[:40]
		var stats Stats
		run := func() *sim.Result {
			pol := New(c, m, nil)
			res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: DefaultRound, Rigid: true, LogAllocations: true}, wl, pol)
			require.NoError(t, err)
			stats = pol.Stats
			return res
		}
		a, b := run(), run()
		assert.Equal(t, "shockwave", a.Policy)
		s := sim.Summarize([]*sim.Result{a})
		assert.Equal(t, 0, s.Unfinished, spec)
		assert.Equal(t, s.JCTs, sim.Summarize([]*sim.Result{b}).JCTs, spec)
		req := map[string]int{}
		for _, j := range wl.Jobs {
			req[j.Name] = j.Replicas
		}
		for _, rs := range a.Rounds {
			for name, al := range rs.Allocations {
				require.Equal(t, req[name], al.GPUs(), "%s: %s rigid", spec, name)
			}
		}
		assert.Positive(t, stats.Plans)
		t.Logf("%s: %+v, avg JCT %.3f h", spec, stats, s.AvgJCT/3600)
	}
}
