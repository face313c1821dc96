package placement_test

import (
	"context"
	"fmt"

	"github.com/sia-sched/sia/placement"
)

// The paper's running example: J1 gets the four GPUs of the B node and J2 the
// two GPUs of the A node. J3 keeps its type and count, so it keeps its GPUs.
func ExamplePlace() {
	nodes := []placement.Node{
		{ID: "a0", Type: "A", GPUs: 2},
		{ID: "b0", Type: "B", GPUs: 4},
		{ID: "b1", Type: "B", GPUs: 4},
	}
	reqs := []placement.Request{
		{Job: "J1", Type: "B", GPUs: 4},
		{Job: "J2", Type: "A", GPUs: 2},
		{Job: "J3", Type: "B", GPUs: 2, Current: []placement.GPU{{Node: "b1", Index: 2}, {Node: "b1", Index: 3}}},
	}
	res, err := placement.Place(nodes, reqs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range []string{"J1", "J2", "J3"} {
		fmt.Println(j, res.Placements[j])
	}
	fmt.Println("evicted:", res.Evicted, "migrated:", res.Migrated)
	// Output:
	// J1 [b0/0 b0/1 b0/2 b0/3]
	// J2 [a0/0 a0/1]
	// J3 [b1/2 b1/3]
	// evicted: [] migrated: []
}

// Fragmentation: a kept 1-GPU job sits on each 4-GPU node, so a new 4-GPU job
// fits nowhere. One kept job is evicted and re-placed beside the other
// (rule c).
func ExamplePlace_eviction() {
	nodes := []placement.Node{{ID: "n0", Type: "t4", GPUs: 4}, {ID: "n1", Type: "t4", GPUs: 4}}
	reqs := []placement.Request{
		{Job: "small1", Type: "t4", GPUs: 1, Current: []placement.GPU{{Node: "n0", Index: 0}}},
		{Job: "small2", Type: "t4", GPUs: 1, Current: []placement.GPU{{Node: "n1", Index: 0}}},
		{Job: "big", Type: "t4", GPUs: 4},
	}
	res, err := placement.Place(nodes, reqs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Placements["big"], res.Placements["small1"], res.Placements["small2"])
	fmt.Println("evicted:", res.Evicted, "migrated:", res.Migrated)
	// Output:
	// [n0/0 n0/1 n0/2 n0/3] [n1/1] [n1/0]
	// evicted: [small1] migrated: [small1]
}

// Rigid jobs keep counts that are no configuration shape: 12 GPUs on 8-GPU
// nodes become a whole node plus 4 GPUs of another; 8 on 6-GPU nodes a whole
// node plus 2.
func ExampleShape() {
	fmt.Println(placement.Shape(12, 8), placement.Shape(6, 4), placement.Shape(8, 6), placement.Shape(16, 8))
	// Output: [8 4] [4 2] [6 2] [8 8]
}

// The running example with positions instead of IDs, as a host that keeps
// its nodes in a slice places round after round: J3 runs on GPUs 2 and 3
// of node 2 (b1); the result lists each request's GPUs by position.
func ExamplePlacer_PlaceSlots() {
	nodes := []placement.Node{
		{ID: "a0", Type: "A", GPUs: 2},
		{ID: "b0", Type: "B", GPUs: 4},
		{ID: "b1", Type: "B", GPUs: 4},
	}
	reqs := []placement.Request{
		{Job: "J1", Type: "B", GPUs: 4},
		{Job: "J2", Type: "A", GPUs: 2},
		{Job: "J3", Type: "B", GPUs: 2},
	}
	cur := [][]placement.Slot{nil, nil, {{Node: 2, Index: 2}, {Node: 2, Index: 3}}}
	var pl placement.Placer // kept across rounds
	res, err := pl.PlaceSlots(context.Background(), nodes, reqs, cur)
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, gs := range res.Placements {
		fmt.Println(reqs[k].Job, gs)
	}
	// Output:
	// J1 [{1 0} {1 1} {1 2} {1 3}]
	// J2 [{0 0} {0 1}]
	// J3 [{2 2} {2 3}]
}
