package sia_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// TestHybridSpanningNodesPredicted: a 4-stage pipeline job whose model is
// fitted (seeded on one replica) on a type of a 1-GPU and a 3-GPU node can
// only run as one pipeline over both nodes; the round predicts that shape
// (a positive goodput from the fitted model, the multi-node network term)
// and starts the job on it, and the host can report it. Before pipelines
// could span nodes in the model, a fitted type had no valid shape for such
// a job and it was queued although the type was free.
func TestHybridSpanningNodesPredicted(t *testing.T) {
	for _, nodes := range [][]int{{1, 3}, {2, 2}, {1, 1, 2}, {3, 3}, {1, 4, 3}, {3, 8}} {
		tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 4, MaxBatch: 64, Stages: map[string]int{"b": 4}, MicroBatches: 4}, nil)
		require.NoError(t, err)
		require.NoError(t, tr.Seed("b", goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 0.2, SyncTime: 0.01}))
		var ns []sia.Node
		for i, g := range nodes {
			ns = append(ns, sia.Node{ID: string(rune('a'+i)) + "n", Type: "b", GPUs: g})
		}
		s, err := sia.New(&sia.Options{RoundTimeout: -1})
		require.NoError(t, err)
		plan, err := s.Round(context.Background(), sia.Snapshot{Now: probeT0, Nodes: ns, Jobs: []sia.Job{{ID: "gpt", Models: tr}}})
		require.NoError(t, err)
		d := plan.Decisions[0]
		require.Equal(t, sia.Start, d.Action, "nodes %v: %v", nodes, d.Reason)
		assert.Positive(t, d.Goodput, "nodes %v: the shape is predicted", nodes)
		assert.Equal(t, d.Allocation.GPUs/4, d.Replicas)
		if slices.Max(nodes) >= 4 && d.Replicas == 1 {
			assert.Equal(t, 1, d.Allocation.Nodes, "nodes %v: a pipeline that fits a node is not split", nodes)
		}
		assert.Len(t, d.Allocation.Placement, d.Allocation.GPUs)
		used := map[string]bool{}
		for _, g := range d.Allocation.Placement {
			used[g.Node] = true
		}
		assert.Len(t, used, d.Allocation.Nodes, "nodes %v: placed on the evaluated number of nodes", nodes)
		m, _ := tr.Model("b")
		want, ok := m.Best(d.Allocation.Nodes, d.Replicas)
		require.True(t, ok)
		assert.InEpsilon(t, want.Goodput, d.Goodput, 1e-9, "nodes %v: the plan's goodput is the model's for the placed shape", nodes)
		_, err = tr.Observe("b", bootstrap.Measurement{Nodes: d.Allocation.Nodes, Replicas: d.Replicas, LocalBatch: 1, StepTime: 0.25, SyncTime: 0.05})
		assert.NoError(t, err, "nodes %v: the host reports the shape it ran", nodes)
	}
}
