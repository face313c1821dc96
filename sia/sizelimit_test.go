package sia_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// Nodes whose GPU count is not a power of two are split into virtual nodes
// (6 = 4 + 2). Per-type capacity alone would let three 4-GPU jobs share two
// 6-GPU nodes, which no placement can hold; the round adds the configset's
// size-limit rows so every allocation it returns is placed.
func TestRoundVirtualNodeSizeLimits(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, nodes := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("nodes=%d", nodes), func(t *testing.T) {
			snap := sia.Snapshot{Now: t0.Add(time.Minute)}
			for k := 0; k < nodes; k++ {
				snap.Cluster.Nodes = append(snap.Cluster.Nodes, sia.Node{ID: fmt.Sprintf("n%d", k), Type: "x", GPUs: 6})
			}
			// Jobs that scale perfectly up to 4 GPUs: each wants a 4-GPU
			// configuration, and there are more of them than 4-GPU
			// virtual nodes.
			for k := 0; k < nodes+1; k++ {
				snap.Jobs = append(snap.Jobs, sia.Job{
					ID: fmt.Sprintf("j%d", k), Submitted: t0,
					Models: sia.Table{"x": {1: 1, 2: 2, 4: 4}},
				})
			}
			s, err := sia.New(&sia.Options{NoScaleUpCap: true})
			require.NoError(t, err)
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err)
			assert.Empty(t, plan.Unplaced, "every allocation must be placeable")
			four := 0
			used := map[sia.GPU]string{}
			for _, d := range plan.Decisions {
				a := d.Allocation
				require.Len(t, a.Placement, a.GPUs, "job %s", d.Job)
				if a.GPUs >= 4 {
					four++
				}
				for _, g := range a.Placement {
					require.Empty(t, used[g], "GPU %v given to %s and %s", g, used[g], d.Job)
					used[g] = d.Job
				}
			}
			assert.Equal(t, nodes, four, "one 4-GPU job per 4-GPU virtual node")
		})
	}
}
