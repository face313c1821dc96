package configset_test

import (
	"fmt"

	"github.com/sia-sched/sia/configset"
)

// The paper's running example: one node with 2 GPUs of type A and one node
// with 4 GPUs of type B.
func Example() {
	s, err := configset.New([]configset.NodeGroup{
		{Type: "A", GPUsPerNode: 2, Nodes: 1},
		{Type: "B", GPUsPerNode: 4, Nodes: 1},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Configs())
	// Output: [(1,1,A) (1,2,A) (1,1,B) (1,2,B) (1,4,B)]
}

// The single-node sizes of a node are a divisible chain ending at its GPU
// count: powers of two for the paper's nodes, the prime factors of the count
// multiplied in one at a time otherwise.
func ExampleChain() {
	fmt.Println(configset.Chain(8), configset.Chain(6), configset.Chain(12), configset.Chain(10))
	// Output: [1 2 4 8] [1 2 6] [1 2 4 12] [1 2 10]
}

// The default heterogeneous cluster of the paper with the 64-GPU cap, and the
// configurations a hybrid-parallel job with 4-GPU replicas may use on a100
// with at most 16 GPUs.
func ExampleSet_Filter() {
	s, err := configset.New([]configset.NodeGroup{
		{Type: "t4", GPUsPerNode: 4, Nodes: 6},
		{Type: "a100", GPUsPerNode: 8, Nodes: 2},
		{Type: "rtx", GPUsPerNode: 8, Nodes: 3},
	}, &configset.Options{MaxGPUs: 64})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(s.Configs()), s.Capacity("a100"))
	cs, err := s.Filter(configset.JobFilter{MaxGPUs: 16, ReplicaSize: map[string]int{"t4": 8, "a100": 4, "rtx": 8}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cs)
	// Output:
	// 19 16
	// [(2,8,t4) (4,16,t4) (1,4,a100) (1,8,a100) (2,16,a100) (1,8,rtx) (2,16,rtx)]
}

// A type with 6- and 8-GPU nodes has one pool per node size. Every
// configuration lies in one pool, and a rigid 5-GPU job is charged the 6 GPUs
// of the node it blocks.
func ExampleSet_Pools() {
	s, err := configset.New([]configset.NodeGroup{
		{Type: "l40s", GPUsPerNode: 6, Nodes: 3},
		{Type: "l40s", GPUsPerNode: 8, Nodes: 1},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range s.Pools() {
		fmt.Println(p.Name, p.Capacity(), p.Chain)
	}
	fmt.Println(s.Configs())
	rigid := s.Fixed("l40s", 5)
	fmt.Println(rigid, s.Charge(rigid[0]), s.Charge(rigid[1]))
	// Output:
	// l40s/6 18 [1 2 6]
	// l40s/8 8 [1 2 4 8]
	// [(1,1,l40s/6) (1,2,l40s/6) (1,6,l40s/6) (2,12,l40s/6) (3,18,l40s/6) (1,1,l40s/8) (1,2,l40s/8) (1,4,l40s/8) (1,8,l40s/8)]
	// [(1,5,l40s/6) (1,5,l40s/8)] 6 5
}

// A type with 8- and 6-GPU nodes: a rigid job of the whole type, or of 14
// GPUs when there is one 8-GPU node, spans the pools.
func ExampleSet_Span() {
	s, err := configset.New([]configset.NodeGroup{
		{Type: "a100", GPUsPerNode: 8, Nodes: 2},
		{Type: "a100", GPUsPerNode: 6, Nodes: 2},
	}, nil)
	if err != nil {
		panic(err)
	}
	for _, g := range []int{28, 20, 17} {
		c, _ := s.Span("a100", g)
		fmt.Println(c, "charged", s.Charge(c))
	}
	// Output:
	// (4,28,a100{8x2:16+6x2:12}) charged 28
	// (3,20,a100{8x1:8+6x2:12}) charged 20
	// (3,17,a100{8x2:16+6x1:1}) charged 17
}
