package shockwave

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

// TestProbe5JobsNoTypeHolds (issue 10, "a job larger than the cluster"):
// on a cluster of a 7-GPU and a 3-GPU type, jobs of 8–16 GPUs fit the
// planner's one virtual type of 10 GPUs but no real type, so placement can
// never run them. They must not take the plan's GPUs from the jobs that
// fit: before, the plan kept choosing the 10-GPU jobs, and a 4-GPU job,
// alone with them, started and then waited until the run stalled.
func TestProbe5JobsNoTypeHolds(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("t4:1x7,rtx:1x3", 1)
	require.NoError(t, err)
	wl, err := sim.Generate(7, 1.5, 12)
	require.NoError(t, err)
	res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: truth, Round: 360, Rigid: true}, wl, New(c, truth, nil))
	require.NoError(t, err)
	fits := 0
	for _, j := range res.Jobs {
		holds := false
		for _, g := range c.Groups {
			holds = holds || truth.Supports(j.App, g.Type) && j.Replicas <= g.Nodes*g.GPUsPerNode
		}
		if holds {
			fits++
			assert.True(t, j.Finished(), "job %s (%d GPUs) fits a type but never finished", j.Name, j.Replicas)
		} else {
			assert.False(t, j.Finished(), j.Name)
			assert.Equal(t, -1.0, j.Start, "job %s (%d GPUs) fits no type but started", j.Name, j.Replicas)
		}
	}
	assert.Positive(t, fits)
}
