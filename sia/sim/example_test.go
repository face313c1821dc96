package sim_test

import (
	"context"
	"fmt"
	"sort"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
)

// Example runs Sia and Gavel on a generated two-hour workload on the
// paper's 64-GPU heterogeneous cluster under the built-in model.
func Example() {
	truth, err := sim.LoadModel()
	if err != nil {
		panic(err)
	}
	cluster, _ := sim.ParseCluster("heterogeneous", 1)
	wl, _ := sim.Generate(1, 2, 10) // seed 1, 2 hours, 10 jobs/h
	s, _ := sim.New(cluster, truth, nil)
	sia, _ := siapolicy.New(cluster, truth, siapolicy.Options{})
	res, err := s.Run(context.Background(), wl, sia)
	if err != nil {
		panic(err)
	}
	sum := sim.Summarize([]*sim.Result{res})
	fmt.Printf("%s: %d jobs, avg JCT %.3f h\n", sum.Policy, sum.Jobs, sum.AvgJCT/3600)

	// Gavel: rigid jobs, 6-minute rounds.
	g, _ := sim.New(cluster, truth, &sim.Options{Round: 360, Rigid: true})
	res, _ = g.Run(context.Background(), wl, gavel.New(cluster, truth, 360))
	sum = sim.Summarize([]*sim.Result{res})
	fmt.Printf("%s: %d jobs, avg JCT %.3f h\n", sum.Policy, sum.Jobs, sum.AvgJCT/3600)
	// Output:
	// sia: 24 jobs, avg JCT 0.189 h
	// gavel: 24 jobs, avg JCT 0.209 h
}

// firstFit is a researcher's own policy: every job gets its requested GPUs
// on the first type with that many free, in submission order; jobs that
// run keep their GPUs.
type firstFit struct{ truth sim.Truth }

func (firstFit) Name() string { return "first-fit" }

func (p firstFit) Schedule(_ context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	free := map[string][]int{}
	for _, g := range s.Cluster.Groups {
		free[g.Type] = make([]int, g.Nodes)
		for i := range free[g.Type] {
			free[g.Type][i] = g.GPUsPerNode
		}
	}
	out := map[string]sim.Alloc{}
	for _, j := range s.Jobs { // running jobs keep their GPUs
		if a := j.Alloc(); a.GPUs() > 0 {
			out[j.Name()] = a
			for _, n := range a.Nodes {
				free[a.Type][n]--
			}
		}
	}
	for _, j := range s.Jobs {
		if j.Alloc().GPUs() > 0 {
			continue
		}
		for _, t := range s.Cluster.Types() {
			if !p.truth.Supports(j.Spec.App, t) {
				continue
			}
			var nodes []int
			for n, f := range free[t] {
				for k := 0; k < f && len(nodes) < j.Spec.Replicas; k++ {
					nodes = append(nodes, n)
				}
			}
			if len(nodes) == j.Spec.Replicas {
				for _, n := range nodes {
					free[t][n]--
				}
				out[j.Name()] = sim.Alloc{Type: t, Nodes: nodes}
				break
			}
		}
	}
	return out, nil
}

// Example_ownPolicy runs a policy of one's own and reads the per-job
// results and the per-round log.
func Example_ownPolicy() {
	truth, _ := sim.LoadModel()
	cluster, _ := sim.ParseCluster("heterogeneous", 1)
	wl, _ := sim.Generate(7, 1, 6)
	s, _ := sim.New(cluster, truth, &sim.Options{Rigid: true, LogAllocations: true})
	res, err := s.Run(context.Background(), wl, firstFit{truth})
	if err != nil {
		panic(err)
	}
	sort.Slice(res.Jobs, func(a, b int) bool { return res.Jobs[a].Submit < res.Jobs[b].Submit })
	for _, j := range res.Jobs[:3] {
		fmt.Printf("%-12s arrival %5.0f s  start %5.0f s  JCT %6.0f s  %5.1f GPU-h  %d restarts\n",
			j.Name, j.Submit, j.Start, j.JCT, j.GPUHours(), j.Restarts)
	}
	r := res.Rounds[0]
	fmt.Printf("round at %.0f s: %d jobs running, allocations %v\n", r.Now, r.Running, r.Allocations)
	// Output:
	// cifar10-0    arrival    59 s  start    60 s  JCT   1177 s    3.3 GPU-h  0 restarts
	// cifar10-1    arrival   609 s  start   660 s  JCT   1483 s    3.2 GPU-h  0 restarts
	// cifar10-2    arrival   739 s  start   780 s  JCT    291 s    0.8 GPU-h  0 restarts
	// round at 60 s: 1 jobs running, allocations map[cifar10-0:{t4 [0 0 0 0 1 1 1 1 2 2]}]
}
