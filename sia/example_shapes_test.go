package sia_test

import (
	"context"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"time"

	"github.com/sia-sched/sia/sia"
)

// Nodes of any size, and one GPU type with nodes of two sizes: an l40s type
// with one 8-GPU and two 6-GPU nodes forms the pools l40s/8 and l40s/6. A
// rigid 12-GPU job takes the two 6-GPU nodes whole and a rigid 8-GPU job the
// 8-GPU node; each is placed in the shape its goodput was predicted for.
func ExampleScheduler_Round_nodeShapes() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := sia.Snapshot{
		Now: t0.Add(time.Minute),
		Nodes: []sia.Node{
			{ID: "e0", Type: "l40s", GPUs: 8},
			{ID: "s0", Type: "l40s", GPUs: 6},
			{ID: "s1", Type: "l40s", GPUs: 6},
		},
		Jobs: []sia.Job{
			{ID: "r12", Kind: sia.Rigid, GPUs: 12, Submitted: t0, Models: siatest.Table{"l40s": {12: 12}}},
			{ID: "r8", Kind: sia.Rigid, GPUs: 8, Submitted: t0, Models: siatest.Table{"l40s": {8: 8}}},
		},
	}
	s, err := sia.New(nil)
	if err != nil {
		panic(err)
	}
	plan, err := s.Round(context.Background(), snap)
	if err != nil {
		panic(err)
	}
	for _, d := range plan.Decisions {
		nodes := map[string]int{}
		for _, g := range d.Allocation.Placement {
			nodes[g.Node]++
		}
		fmt.Println(d.Job, d.Action, d.Allocation.GPUs, "GPUs on", d.Allocation.Nodes, "nodes:", nodes)
	}
	// Output:
	// r12 start 12 GPUs on 2 nodes: map[s0:6 s1:6]
	// r8 start 8 GPUs on 1 nodes: map[e0:8]
}
