package sia_test

// Probes (issue 10, a tight deadline never freezes the cluster, on mixed
// node sizes within a type): a round out of time builds, for the queued
// jobs that may start, each type's smallest configuration only. On a type
// whose nodes differ in size that configuration lies in one pool (the
// smallest nodes'); when those nodes are full and a larger node of the
// type is free, the job must still start there.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

func TestProbe7LateStartsOnOtherPool(t *testing.T) {
	m := probeModel{speed: map[string]float64{"x": 1}, gain: 0.9, cross: 0.9}
	cases := []struct {
		name  string
		sizes []int // node sizes of type x; the first is full
		queue sia.Job
	}{
		{"1 full, 5 free", []int{1, 5}, sia.Job{Models: m}},
		{"1 full, 3 and 5 free", []int{1, 3, 5}, sia.Job{Models: m}},
		{"2 full, 8 free, min 2", []int{2, 8}, sia.Job{Models: m, MinGPUs: 2}},
		{"4 full, 6 free, strong-scaling", []int{4, 6}, sia.Job{Kind: sia.StrongScaling, Models: m}},
		{"1 full, 5 free, no model yet", []int{1, 5}, sia.Job{Models: probeModel{none: map[string]bool{"x": true}}}},
		{"3 full, 12 free, rigid 3", []int{3, 12}, sia.Job{Kind: sia.Rigid, GPUs: 3, Models: m}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var nodes []sia.Node
			for k, g := range c.sizes {
				nodes = append(nodes, sia.Node{ID: fmt.Sprintf("x%d", k), Type: "x", GPUs: g})
			}
			full := sia.Allocation{Type: "x", Nodes: 1, GPUs: c.sizes[0]}
			for g := 0; g < c.sizes[0]; g++ {
				full.Placement = append(full.Placement, sia.GPU{Node: "x0", Index: g})
			}
			q := c.queue
			q.ID = "q"
			snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{
				{ID: "run", Kind: sia.Rigid, GPUs: c.sizes[0], Models: m, NonPreemptible: true, State: sia.JobState{Current: full}},
				q,
			}}
			for k := 0; k < 20; k++ { // waiting jobs that fit nowhere now
				snap.Jobs = append(snap.Jobs, sia.Job{ID: fmt.Sprintf("big%d", k), Models: m, MinGPUs: 4 * c.sizes[len(c.sizes)-1]})
			}
			s, err := sia.New(&sia.Options{Parallelism: 1})
			require.NoError(t, err)
			for _, d := range []time.Duration{0, 1} {
				ctx, cancel := context.WithTimeout(context.Background(), d)
				plan, err := s.Round(ctx, snap)
				cancel()
				require.NoError(t, err)
				probeCheck(t, snap, s.Options(), plan)
				assert.Equal(t, sia.Start, plan.Decisions[1].Action, "deadline %v: queued job waits (%v) beside a free node of its type", d, plan.Decisions[1].Reason)
			}
		})
	}
}

// TestProbe7LateFillsStrandedGPUs: two running 3-GPU jobs on an 8-GPU node
// (of two; the other is full) are charged 4 GPUs each (3 is off the node's chain), so the allocation
// problem sees the node full and a round out of time admits nothing there;
// the fill step starts waiting jobs on such idle GPUs after placement, and
// Round documents that it runs until D + S/2. A round whose deadline has
// passed (not one whose ctx was cancelled) must still fill while that
// time lasts: the fill did nothing whenever ctx had expired. The round is
// timed by the wall clock, so it is given five tries (before the fix, none
// started the job).
func TestProbe7LateFillsStrandedGPUs(t *testing.T) {
	m := probeModel{speed: map[string]float64{"h": 1}, gain: 0.9, cross: 0.9}
	on := func(node string, from, k int) sia.Allocation {
		a := sia.Allocation{Type: "h", Nodes: 1, GPUs: k}
		for g := from; g < from+k; g++ {
			a.Placement = append(a.Placement, sia.GPU{Node: node, Index: g})
		}
		return a
	}
	snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "h0", Type: "h", GPUs: 8}, {ID: "h1", Type: "h", GPUs: 8}}, Jobs: []sia.Job{
		{ID: "r3", Kind: sia.Rigid, GPUs: 3, Models: m, State: sia.JobState{Current: on("h0", 0, 3)}},
		{ID: "s3", Kind: sia.Rigid, GPUs: 3, Models: m, State: sia.JobState{Current: on("h0", 3, 3)}},
		{ID: "q", Models: m, MaxGPUs: 1},
		{ID: "w8", Kind: sia.Rigid, GPUs: 8, Models: m, NonPreemptible: true, State: sia.JobState{Current: on("h1", 0, 8)}},
	}}
	s, err := sia.New(&sia.Options{Parallelism: 1})
	require.NoError(t, err)
	for _, d := range []time.Duration{0, 1} {
		started := 0
		for try := 0; try < 5; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			plan, err := s.Round(ctx, snap)
			cancel()
			require.NoError(t, err)
			probeCheck(t, snap, s.Options(), plan)
			if plan.Decisions[2].Action == sia.Start {
				started++
			}
		}
		assert.Positive(t, started, "deadline %v: job q never started beside the 2 idle GPUs", d)
	}
	// without a deadline the solver's plan is filled as well
	plan, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, sia.Start, plan.Decisions[2].Action)
	// a cancelled round does only what it must
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	plan, err = s.Round(ctx, snap)
	require.NoError(t, err)
	probeCheck(t, snap, s.Options(), plan)
}
