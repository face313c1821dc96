package bootstrap_test

import (
	"fmt"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// A host keeps one Tracker per job: seeded with 1-GPU profiles at
// submission, refined from what the job reports, handed to the scheduler
// every round (sia.Job.Models).
func ExampleTracker() {
	tr, err := bootstrap.New(bootstrap.Spec{
		InitBatch: 128, MaxBatch: 4096,
		Limits: map[string]goodput.Limits{
			"a100": {MinLocalBatch: 32, MaxLocalBatch: 4096},
			"t4":   {MinLocalBatch: 32, MaxLocalBatch: 1024},
		},
	}, nil) // nil options: Profiled mode
	if err != nil {
		panic(err)
	}
	// 1-GPU profiles over several batch sizes (step time, sync time).
	_ = tr.Seed("a100",
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 128, StepTime: 0.020, SyncTime: 0.0002},
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 512, StepTime: 0.060, SyncTime: 0.0002})
	_ = tr.Seed("t4",
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 128, StepTime: 0.100, SyncTime: 0.0005},
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 512, StepTime: 0.360, SyncTime: 0.0005})
	fmt.Println("after seeding:", tr.Source("a100"), tr.Source("t4"))

	// The job ran on 4 T4 GPUs and reports its timings and gradient
	// statistics; a new (nodes, replicas, batch) key triggers one refit.
	refit, _ := tr.Observe("t4", bootstrap.Measurement{
		Nodes: 1, Replicas: 4, LocalBatch: 256, StepTime: 0.25, SyncTime: 0.06,
		Grad: &goodput.GradStats{Sqr: 1, Var: 40},
	})
	ref, _ := tr.Reference("a100")
	fmt.Println("after a 4-GPU run:", tr.Source("a100"), "from", ref, "/", tr.Source("t4"), "refit:", refit)

	// The same key again costs nothing.
	refit, _ = tr.Observe("t4", bootstrap.Measurement{Nodes: 1, Replicas: 4, LocalBatch: 256, StepTime: 0.26, SyncTime: 0.06})
	fmt.Println("repeat refit:", refit, "fits so far:", tr.Refits())
	// Output:
	// after seeding: seeded seeded
	// after a 4-GPU run: projected from t4 / measured refit: true
	// repeat refit: false fits so far: 3
}

// Static models suit hosts that know every job's throughput up front.
func ExampleStatic() {
	models := bootstrap.Static{"a100": {
		Params:    goodput.Params{AlphaC: 0.01, BetaC: 0.0001, AlphaR: 0.002, BetaR: 0.001, AlphaN: 0.02, BetaN: 0.005, Gamma: 1.5},
		Grad:      goodput.GradStats{Sqr: 1, Var: 50},
		InitBatch: 128, MaxBatch: 4096,
		Limits: goodput.Limits{MinLocalBatch: 32, MaxLocalBatch: 4096},
	}}
	m, src := models.Model("a100")
	c, _ := m.Best(1, 4)
	_, none := models.Model("t4")
	fmt.Println(src, none, c.GlobalBatch > 128)
	// Output: measured none true
}
