package ilp_test

import (
	"context"
	"fmt"
	"os"

	"github.com/sia-sched/sia/ilp"
)

// Three jobs compete for a small cluster; values are Sia's (goodput)^-0.5,
// so the problem is minimised, and leaving a job out costs 1.1.
func Example() {
	p := &ilp.Problem{
		Sense:    ilp.Minimize,
		Capacity: map[string]int{"a100": 8, "t4": 4},
		Grid:     0.01, // values are rounded to two decimals
		Jobs: []ilp.Job{
			{ID: "bert", Unallocated: 1.1, Pin: -1, Options: []ilp.Option{
				{Type: "a100", GPUs: 4, Value: 0.35}, {Type: "a100", GPUs: 8, Value: 0.27}, {Type: "t4", GPUs: 4, Value: 0.7},
			}},
			{ID: "cifar", Unallocated: 1.1, Pin: -1, Options: []ilp.Option{
				{Type: "a100", GPUs: 2, Value: 0.5}, {Type: "t4", GPUs: 2, Value: 0.62},
			}},
			// yolo is restoring a checkpoint: it keeps its 4 A100s
			{ID: "yolo", Unallocated: 1.1, Pin: 0, Options: []ilp.Option{
				{Type: "a100", GPUs: 4, Value: 0.4},
			}},
		},
	}
	sol, err := ilp.Solve(context.Background(), p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v %.2f\n", sol.Status, sol.Objective)
	for i, j := range p.Jobs {
		if k := sol.Assignment[i]; k >= 0 {
			fmt.Printf("%s: %d × %s\n", j.ID, j.Options[k].GPUs, j.Options[k].Type)
		} else {
			fmt.Printf("%s: none\n", j.ID)
		}
	}
	// the same round for cbc or glpsol
	_ = ilp.WriteLP(os.Stdout, &ilp.Problem{Capacity: map[string]int{}})
	// Output:
	// optimal 1.37
	// bert: 4 × a100
	// cifar: 2 × t4
	// yolo: 4 × a100
	// \ sia allocation problem: 0 jobs, sense min
	// Minimize
	//  obj: 0 zero
	// Subject To
	// Bounds
	//  zero = 0
	// Binaries
	// End
}
