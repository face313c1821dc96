package sia_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/placement"
	"github.com/sia-sched/sia/sia"
)

// checkParts asserts that a spanning allocation (per: GPUs per node) has
// the evaluated parts: on the nodes of each part's size, the part's node
// count and GPUs, split as placement.Shape.
func checkParts(t *testing.T, job string, parts []configset.Part, per map[string]int, size map[string]int) {
	t.Helper()
	require.NotEmpty(t, parts, job)
	got := map[int][]int{}
	for n, c := range per {
		got[size[n]] = append(got[size[n]], c)
	}
	require.Len(t, got, len(parts), "job %s: node sizes %v, parts %v", job, got, parts)
	for _, p := range parts {
		cs := got[p.NodeGPUs]
		slices.Sort(cs)
		slices.Reverse(cs)
		require.Len(t, cs, p.Nodes, "job %s part %+v", job, p)
		if want := placement.Shape(p.GPUs, p.NodeGPUs); len(want) == p.Nodes {
			require.Equal(t, want, cs, "job %s part %+v", job, p)
		}
	}
}

// spanNodes is a type x with 8-GPU and 6-GPU nodes.
func spanNodes(n8, n6 int) []sia.Node {
	return append(nodesOf("e", "x", n8, 8), nodesOf("s", "x", n6, 6)...)
}

// TestRoundSpanningPools: counts that no pool of a type mixing node sizes
// can hold run on nodes of several sizes when the type is free (before
// spanning configurations they were queued forever): a rigid job of the
// whole type, a rigid job of 8 + 6, a job whose MinGPUs exceeds every pool.
func TestRoundSpanningPools(t *testing.T) {
	lin := shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 0.95}
	type want struct {
		job         string
		nodes, gpus int
		per         map[int]int // node size -> GPUs on nodes of that size
	}
	for _, tc := range []struct {
		name  string
		nodes []sia.Node
		jobs  []sia.Job
		want  []want
	}{
		{"rigid whole type 8,8,6,6", spanNodes(2, 2), []sia.Job{{ID: "r28", Kind: sia.Rigid, GPUs: 28, Submitted: shapesT0, Models: lin}},
			[]want{{"r28", 4, 28, map[int]int{8: 16, 6: 12}}}},
		{"rigid 14 on 8,6,6 is 8+6", spanNodes(1, 2), []sia.Job{{ID: "r14", Kind: sia.Rigid, GPUs: 14, Submitted: shapesT0, Models: lin}},
			[]want{{"r14", 2, 14, map[int]int{8: 8, 6: 6}}}},
		{"rigid 20 on 8,6,6 is the whole type", spanNodes(1, 2), []sia.Job{{ID: "r20", Kind: sia.Rigid, GPUs: 20, Submitted: shapesT0, Models: lin}},
			[]want{{"r20", 3, 20, map[int]int{8: 8, 6: 12}}}},
		{"MinGPUs 20 on 8,8,6,6", spanNodes(2, 2), []sia.Job{{ID: "a20", MinGPUs: 20, MaxGPUs: 20, Submitted: shapesT0, Models: lin}},
			[]want{{"a20", 3, 20, map[int]int{8: 8, 6: 12}}}},
		{"rigid 14 beside a rigid 6", spanNodes(1, 2), []sia.Job{
			{ID: "r14", Kind: sia.Rigid, GPUs: 14, Submitted: shapesT0, Models: lin},
			{ID: "r6", Kind: sia.Rigid, GPUs: 6, Submitted: shapesT0, Models: lin}},
			[]want{{"r14", 2, 14, map[int]int{8: 8, 6: 6}}, {"r6", 1, 6, map[int]int{6: 6}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Cluster: sia.Cluster{Nodes: tc.nodes}, Jobs: tc.jobs}
			plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
			assert.Empty(t, unplacedOf(&plan))
			assert.Equal(t, sia.StatusOptimal, plan.Status)
			size := map[string]int{}
			for _, n := range tc.nodes {
				size[n.ID] = n.GPUs
			}
			for _, w := range tc.want {
				d, ok := plan.Decision(w.job)
				require.True(t, ok)
				require.Equal(t, sia.Start, d.Action, w.job)
				assert.Equal(t, w.nodes, d.Allocation.Nodes, w.job)
				assert.Equal(t, w.gpus, d.Allocation.GPUs, w.job)
				per := map[int]int{}
				for _, g := range d.Allocation.Placement {
					per[size[g.Node]]++
				}
				assert.Equal(t, w.per, per, w.job)
			}
		})
	}
}
