package sia_test

import (
	"context"
	"fmt"
	"math/rand/v2"
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
// count and GPUs, split as placement.Shape when split is true (a shape the
// fill step built from idle GPUs, matrixEntry.Shaped, splits as they were
// idle: the model sees its nodes and GPUs only).
func checkParts(t *testing.T, job string, parts []configset.Part, per map[string]int, size map[string]int, split bool) {
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
		if want := placement.Shape(p.GPUs, p.NodeGPUs); split && len(want) == p.Nodes {
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
		{"MinGPUs 20 without a maximum takes the whole type", spanNodes(2, 2), []sia.Job{{ID: "a20", MinGPUs: 20, Submitted: shapesT0, Models: lin}},
			[]want{{"a20", 4, 28, map[int]int{8: 16, 6: 12}}}},
		{"rigid 14 beside a rigid 6", spanNodes(1, 2), []sia.Job{
			{ID: "r14", Kind: sia.Rigid, GPUs: 14, Submitted: shapesT0, Models: lin},
			{ID: "r6", Kind: sia.Rigid, GPUs: 6, Submitted: shapesT0, Models: lin}},
			[]want{{"r14", 2, 14, map[int]int{8: 8, 6: 6}}, {"r6", 1, 6, map[int]int{6: 6}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Nodes: tc.nodes, Jobs: tc.jobs}
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

// spanHeld is a running allocation of 14 GPUs on e0 (8) and s0 (6).
func spanHeld() sia.Allocation {
	a := sia.Allocation{Type: "x", Nodes: 2, GPUs: 14}
	for k := 0; k < 8; k++ {
		a.Placement = append(a.Placement, sia.GPU{Node: "e0", Index: k})
	}
	for k := 0; k < 6; k++ {
		a.Placement = append(a.Placement, sia.GPU{Node: "s0", Index: k})
	}
	return a
}

// TestRoundKeepsSpanningCurrent: a job running on an 8-GPU and a 6-GPU node
// of one type keeps its allocation and GPUs (rigid, adaptive with bounds
// that hold it, pinned); its current entry is the spanning configuration of
// its placement, and a pinned one holds against jobs that want its GPUs.
func TestRoundKeepsSpanningCurrent(t *testing.T) {
	lin := shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 0.95}
	for _, tc := range []struct {
		name string
		job  sia.Job
	}{
		{"rigid", sia.Job{ID: "cur", Kind: sia.Rigid, GPUs: 14, Submitted: shapesT0, Models: lin}},
		{"adaptive", sia.Job{ID: "cur", MinGPUs: 14, MaxGPUs: 14, Submitted: shapesT0, Models: lin}},
		{"rigid pinned", sia.Job{ID: "cur", Kind: sia.Rigid, GPUs: 14, NonPreemptible: true, Submitted: shapesT0, Models: lin}},
		{"adaptive pinned restoring", sia.Job{ID: "cur", Submitted: shapesT0, Models: lin,
			State: sia.JobState{Restoring: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.job
			j.State.Current = spanHeld()
			other := sia.Job{ID: "big", Kind: sia.Rigid, GPUs: 20, Submitted: shapesT0, Models: shapeModel{speed: map[string]float64{"x": 100}, gain: 1, cross: 1}}
			snap := sia.Snapshot{Now: shapesT0.Add(time.Hour), Nodes: spanNodes(1, 2), Jobs: []sia.Job{j}}
			if j.NonPreemptible || j.State.Restoring {
				snap.Jobs = append(snap.Jobs, other) // wants the whole type
			}
			plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
			d, ok := plan.Decision("cur")
			require.True(t, ok)
			assert.Equal(t, sia.Keep, d.Action)
			assert.ElementsMatch(t, spanHeld().Placement, d.Allocation.Placement)
			e := sia.PlanEntry(&plan, 0)
			require.NotNil(t, e)
			assert.True(t, e.Current)
			assert.Equal(t, []configset.Part{{NodeGPUs: 8, Nodes: 1, GPUs: 8}, {NodeGPUs: 6, Nodes: 1, GPUs: 6}}, e.Config.Parts())
			if len(snap.Jobs) > 1 {
				assert.True(t, d.Pinned)
				b, _ := plan.Decision("big")
				assert.Equal(t, sia.Queue, b.Action, "the pinned job holds its GPUs")
			}
		})
	}
}

// TestValidateSpanningCurrent: a Current on nodes of several sizes is
// accepted when the type's nodes can hold it, and rejected with the job and
// field named when they cannot.
func TestValidateSpanningCurrent(t *testing.T) {
	lin := shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 0.95}
	snap := sia.Snapshot{Now: shapesT0.Add(time.Hour), Nodes: spanNodes(1, 2),
		Jobs: []sia.Job{{ID: "cur", Submitted: shapesT0, Models: lin, State: sia.JobState{Current: spanHeld()}}}}
	require.NoError(t, snap.Validate())
	bad := snap
	bad.Jobs = []sia.Job{snap.Jobs[0]}
	bad.Jobs[0].State.Current = sia.Allocation{Type: "x", Nodes: 2, GPUs: 15}
	err := bad.Validate()
	require.ErrorIs(t, err, sia.ErrInvalidInput)
	assert.ErrorContains(t, err, `"cur"`)
	assert.ErrorContains(t, err, "Jobs[0].State.Current.GPUs")
	bad.Jobs[0].State.Current = spanHeld()
	bad.Jobs[0].State.Current.Placement[13].Index = 6 // the 6-GPU node has no GPU 6
	err = bad.Validate()
	require.ErrorIs(t, err, sia.ErrInvalidInput)
	assert.ErrorContains(t, err, "Placement[13]")
}

// TestRoundSpanningReservedAndQuota: a spanning entry counts against every
// pool it touches, in reservations (a row over the type's pools) and
// quotas: a rigid 14 on 8 + 6 nodes runs when the type less its
// reservation holds 14 GPUs, and waits with the reason when it does not.
func TestRoundSpanningReservedAndQuota(t *testing.T) {
	lin := shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 0.95}
	job := sia.Job{ID: "r14", Kind: sia.Rigid, GPUs: 14, Submitted: shapesT0, Models: lin}
	for _, tc := range []struct {
		name     string
		reserved int
		limit    int // quota on the job; 0 = none
		action   sia.Action
		reason   sia.QueueReason
	}{
		{"reservation leaves 14", 6, 0, sia.Start, sia.ReasonNone},
		{"reservation leaves 13", 7, 0, sia.Queue, sia.ReasonReserved},
		{"quota of 14", 0, 14, sia.Start, sia.ReasonNone},
		{"quota of 13", 0, 13, sia.Queue, sia.ReasonQuota},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Nodes: spanNodes(1, 2), Jobs: []sia.Job{job}}
			if tc.reserved > 0 {
				snap.Reserved = map[string]int{"x": tc.reserved}
			}
			if tc.limit > 0 {
				snap.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"r14"}, Type: "x", Limit: tc.limit}}
			}
			plan := round(t, snap, nil)
			d := plan.Decisions[0]
			assert.Equal(t, tc.action, d.Action)
			assert.Equal(t, tc.reason, d.Reason)
			assert.Equal(t, sia.StatusOptimal, plan.Status)
		})
	}
}

// TestRoundSpanPinnedBruteForce: on types mixing two or three node sizes,
// with rigid jobs larger than every pool (spanning entries), adaptive jobs
// and restoring jobs pinned to random GPUs (which fragment the nodes):
// every allocation is placed in its evaluated shape, and whenever a job the
// solver allocated is left unplaced an exhaustive search confirms that the
// allocation cannot be packed by the evaluated shapes.
func TestRoundSpanPinnedBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	o := &sia.Options{NoScaleUpCap: true}
	spanning, unplaced, rounds := 0, 0, 0
	for iter := 0; iter < 120; iter++ {
		var nodes []sia.Node
		sizes := []int{8, 6, 4, 3, 5, 2, 12}
		rng.Shuffle(len(sizes), func(a, b int) { sizes[a], sizes[b] = sizes[b], sizes[a] })
		largest, capacity := 0, 0
		for p := 0; p < 2+rng.IntN(2); p++ {
			n := 1 + rng.IntN(2)
			nodes = append(nodes, nodesOf(fmt.Sprintf("x%d_", p), "x", n, sizes[p])...)
			largest, capacity = max(largest, n*sizes[p]), capacity+n*sizes[p]
		}
		var jobs []sia.Job
		for k := 0; k < 1+rng.IntN(4); k++ {
			m := shapeModel{speed: map[string]float64{"x": 0.5 + rng.Float64()}, gain: 0.5 + 0.5*rng.Float64(), cross: 0.7 + 0.3*rng.Float64()}
			j := sia.Job{ID: fmt.Sprintf("j%d", k), Submitted: shapesT0, Models: m}
			if rng.IntN(2) == 0 && largest < capacity {
				j.Kind, j.GPUs = sia.Rigid, largest+1+rng.IntN(capacity-largest)
			}
			jobs = append(jobs, j)
		}
		taken := map[sia.GPU]bool{}
		for k := 0; k < rng.IntN(3); k++ {
			nd := nodes[rng.IntN(len(nodes))]
			idx := rng.IntN(nd.GPUs)
			if gp := (sia.GPU{Node: nd.ID, Index: idx}); !taken[gp] {
				taken[gp] = true
				jobs = append(jobs, sia.Job{ID: fmt.Sprintf("p%d", k), Kind: sia.Rigid, GPUs: 1, Submitted: shapesT0,
					Models: shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 1},
					State:  sia.JobState{Restoring: true, Current: sia.Allocation{Type: "x", Nodes: 1, GPUs: 1, Placement: []sia.GPU{gp}}}})
			}
		}
		snap := sia.Snapshot{Nodes: nodes, Jobs: jobs}
		for r := 0; r < 3; r++ {
			snap.Now = shapesT0.Add(time.Duration(r+1) * time.Hour)
			plan := round(t, snap, o)
			rounds++
			for i := range plan.Decisions {
				if e := sia.PlanEntry(&plan, i); e != nil && e.Config.Spanning() {
					spanning++
				}
			}
			if u := unplacedOf(&plan); len(u) > 0 {
				unplaced += len(u)
				m, err := sia.BuildMatrix(&snap, o)
				require.NoError(t, err)
				sol, err := sia.Solve(context.Background(), m, o)
				require.NoError(t, err)
				require.False(t, packable(snap, m, sol), "iter %d round %d: placement left %v unplaced, but the allocation packs (%v)", iter, r, u, nodes)
			}
			for i, d := range plan.Decisions {
				if snap.Jobs[i].ID[0] == 'j' {
					snap.Jobs[i].State.Current = d.Allocation
				}
			}
		}
	}
	t.Logf("%d rounds, %d spanning allocations, %d unplaced (all confirmed unpackable)", rounds, spanning, unplaced)
	assert.Positive(t, spanning)
}

// TestRoundPinnedSpanningExact: a restoring job pinned to 5 GPUs of an
// 8-GPU node and 3 of a 6-GPU node counts exactly those GPUs against each
// pool (not the chain sizes 8 and 6), so the rest of both nodes stays
// usable: rigid jobs of 8, 2 and 2 GPUs run beside it.
func TestRoundPinnedSpanningExact(t *testing.T) {
	lin := shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 0.95}
	var held []sia.GPU
	for k := 0; k < 5; k++ {
		held = append(held, sia.GPU{Node: "e0", Index: k})
	}
	for k := 0; k < 3; k++ {
		held = append(held, sia.GPU{Node: "s0", Index: k})
	}
	rigid := func(id string, g int) sia.Job {
		return sia.Job{ID: id, Kind: sia.Rigid, GPUs: g, Submitted: shapesT0, Models: lin}
	}
	snap := sia.Snapshot{Now: shapesT0.Add(time.Hour), Nodes: spanNodes(2, 1), Jobs: []sia.Job{
		{ID: "pin", Submitted: shapesT0, Models: lin, State: sia.JobState{Restoring: true, Current: sia.Allocation{Type: "x", Nodes: 2, GPUs: 8, Placement: held}}},
		rigid("a", 8), rigid("b", 2), rigid("c", 2)}}
	plan := round(t, snap, nil)
	assert.Equal(t, sia.StatusOptimal, plan.Status)
	d := plan.Decisions[0]
	assert.Equal(t, sia.Keep, d.Action)
	assert.True(t, d.Pinned)
	assert.Equal(t, "8x1:5+6x1:3", sia.PlanEntry(&plan, 0).Config.Span)
	for _, d := range plan.Decisions[1:] {
		assert.Equal(t, sia.Start, d.Action, d.Job)
	}
}
