package simtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/simtest"
)

// ExampleRandomState checks a policy's answer on random states, without a
// trace.
func ExampleRandomState() {
	truth, _ := sim.LoadModel()
	cluster, _ := sim.ParseCluster("heterogeneous", 1)
	bad := 0
	for seed := uint64(0); seed < 20; seed++ {
		s, err := simtest.RandomState(rand.New(rand.NewPCG(seed, 1)), cluster, truth, &simtest.Options{Jobs: 8})
		if err != nil {
			panic(err)
		}
		allocs, err := gavel.New(cluster, truth, 360).Schedule(context.Background(), s)
		if err != nil || sim.CheckAllocations(s, truth, allocs) != nil {
			bad++
		}
	}
	fmt.Println("invalid answers:", bad)
	// Output:
	// invalid answers: 0
}

// ExampleNewJob builds one state by hand: a running job and a queued one.
func ExampleNewJob() {
	truth, _ := sim.LoadModel()
	cluster, _ := sim.NewCluster(sim.NodeGroup{Type: "a100", Nodes: 1, GPUsPerNode: 8})
	app, _ := truth.App("cifar10")
	running, _ := sim.NewJob(sim.JobSpec{Name: "c0", App: "cifar10", Replicas: 4, Batch: 2048}, app,
		sim.JobState{Alloc: sim.Alloc{Type: "a100", Nodes: []int{0, 0, 0, 0}}, Restarts: 1})
	queued, _ := sim.NewJob(sim.JobSpec{Name: "c1", App: "cifar10", Submit: 30, Replicas: 8, Batch: 2048}, app, sim.JobState{})
	s, err := sim.NewState(60, 60, cluster, truth, running, queued)
	if err != nil {
		panic(err)
	}
	err = sim.CheckAllocations(s, truth, map[string]sim.Alloc{
		"c0": running.Alloc(),
		"c1": {Type: "a100", Nodes: []int{0, 0, 0, 0, 0, 0, 0, 0}},
	})
	fmt.Println(err)
	// Output:
	// sim: job "c1": field "Nodes": node 0 of type a100 over capacity (8 GPUs)
}
