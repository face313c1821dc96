package siapolicy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

// TestWaitReasonsEveryPlacement: the per-job wait reasons are recorded with
// either placement (the library's, or the published simulator's used by
// the sia-artifact variants), in every round a job waits.
func TestWaitReasonsEveryPlacement(t *testing.T) {
	c, err := sim.NewCluster(sim.NodeGroup{Type: "t4", Nodes: 1, GPUsPerNode: 4})
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl := &sim.Workload{Name: "w", Jobs: []sim.JobSpec{
		{Name: "big", App: "cifar10", Submit: 0, Replicas: 8, Batch: 128},
		{Name: "a", App: "cifar10", Submit: 0, Replicas: 4, Batch: 128},
	}}
	for _, art := range []bool{false, true} {
		p, err := New(c, m, Options{Rigid: true, ArtifactPlacement: art})
		require.NoError(t, err)
		res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Rigid: true, MaxTime: 3 * 3600}, wl, p)
		require.NoError(t, err)
		for _, j := range res.Jobs {
			if j.Name == "big" {
				assert.Equal(t, len(res.Rounds), j.WaitReasons[sia.ReasonTooLarge.String()], "artifact placement %v: too large in every round", art)
			}
		}
	}
}
