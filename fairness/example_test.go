package fairness_test

import (
	"fmt"

	"github.com/sia-sched/sia/fairness"
)

// Finish-time fairness on the paper's default heterogeneous cluster. Each job
// runs alone k times faster on k GPUs; an a100 is 3× and an rtx 1.5× a t4.
// imagenet's fair share of t4 is 24/10 = 2.4 GPUs: its isolated time there is
// interpolated between its 2- and 3-GPU runs.
func Example() {
	cluster := []fairness.TypeGPUs{{Type: "t4", GPUs: 24}, {Type: "a100", GPUs: 16}, {Type: "rtx", GPUs: 24}}
	speed := map[string]float64{"t4": 1, "a100": 3, "rtx": 1.5}
	isolated := func(work float64) fairness.IsolatedFunc {
		return func(gpuType string, gpus int) (float64, error) {
			return work / (speed[gpuType] * float64(gpus)), nil
		}
	}
	jobs := []fairness.Job{
		{ID: "bert", SharedJCT: 3000, AvgJobs: 8, Isolated: isolated(30000)},
		{ID: "cifar10", SharedJCT: 900, AvgJobs: 6, Isolated: isolated(9000)},
		{ID: "imagenet", SharedJCT: 100000, AvgJobs: 10, Isolated: isolated(200000)},
	}
	ratios, err := fairness.Compute(cluster, jobs, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range ratios {
		fmt.Printf("%s ρ=%.3f\n", r.Job, r.Rho)
	}
	sum, err := fairness.Summarize(fairness.Rhos(ratios))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("worst %.3f, unfair %.0f%%\n", sum.Worst, 100*sum.UnfairFraction)
	// Output:
	// bert ρ=0.431
	// cifar10 ρ=0.568
	// imagenet ρ=1.617
	// worst 1.617, unfair 33%
}

// The artifact's floor/ceil interpolation of isolated completion times.
func ExampleFairJCT() {
	runs := map[int]float64{2: 60, 3: 50}
	t, err := fairness.FairJCT(func(k int) (float64, error) { return runs[k], nil }, 2.5)
	fmt.Println(t, err)
	// Output: 55 <nil>
}
