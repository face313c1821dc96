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

// Nodes whose GPU count is not a power of two are split into virtual nodes.
func ExampleVirtualNodes() {
	fmt.Println(configset.VirtualNodes(6), configset.VirtualNodes(12), configset.VirtualNodes(8))
	// Output: [4 2] [8 4] [8]
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

// A 6-GPU node is virtual 4 + 2: single-node configurations up to 4 GPUs and
// whole 4-GPU virtual nodes beyond, with a size limit so that the 4-GPU
// configurations fit the 4-GPU virtual nodes.
func ExampleSet_SizeLimits() {
	s, err := configset.New([]configset.NodeGroup{{Type: "v100", GPUsPerNode: 6, Nodes: 3}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Configs(), s.Capacity("v100"))
	for _, l := range s.SizeLimits("v100") {
		fmt.Printf("configurations of ≥ %d GPUs use at most %d GPUs\n", l.MinGPUs, l.Limit)
	}
	// Output:
	// [(1,1,v100) (1,2,v100) (1,4,v100) (2,8,v100) (3,12,v100)] 18
	// configurations of ≥ 4 GPUs use at most 12 GPUs
}
