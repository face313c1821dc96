package sia_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// The paper's running example: one node with 2 GPUs of type A, one with 4 of
// type B, two jobs with normalised goodputs per configuration (stated
// directly with siatest.Table). J1 scales well on B, J2 prefers A.
func Example() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := sia.Snapshot{
		Now: t0.Add(time.Minute),
		Nodes: []sia.Node{
			{ID: "a0", Type: "A", GPUs: 2},
			{ID: "b0", Type: "B", GPUs: 4},
		},
		Jobs: []sia.Job{
			{ID: "J1", Submitted: t0, Models: siatest.Table{"A": {1: 1, 2: 1.8}, "B": {1: 1.5, 2: 2.8, 4: 5}}},
			{ID: "J2", Submitted: t0, Models: siatest.Table{"A": {1: 1.6, 2: 3}, "B": {1: 1, 2: 1.9, 4: 3.4}}},
		},
	}
	// New jobs are capped at 1 GPU by default (scale up at most 2× the
	// largest size they ran on); the example allocates from scratch.
	s, err := sia.New(&sia.Options{NoScaleUpCap: true})
	if err != nil {
		panic(err)
	}
	plan, err := s.Round(context.Background(), snap)
	if err != nil {
		panic(err)
	}
	for _, d := range plan.Decisions {
		a := d.Allocation
		fmt.Printf("%s %s (%d,%d,%s) on %v\n", d.Job, d.Action, a.Nodes, a.GPUs, a.Type, a.Placement)
	}
	fmt.Println(plan.Status)
	// Output:
	// J1 start (1,4,B) on [{b0 0} {b0 1} {b0 2} {b0 3}]
	// J2 start (1,2,A) on [{a0 0} {a0 1}]
	// optimal
}

// A host loop round: jobs carry bootstrap.Trackers, the plan gives each job
// its GPUs and batch size, and the host reports measurements back.
func ExampleScheduler_Round() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, _ := bootstrap.New(bootstrap.Spec{
		InitBatch: 128, MaxBatch: 4096,
		Limits: map[string]goodput.Limits{"a100": {MinLocalBatch: 32, MaxLocalBatch: 4096}},
		Grad:   goodput.GradStats{Sqr: 1, Var: 50},
	}, nil)
	_ = tr.Seed("a100",
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 128, StepTime: 0.020, SyncTime: 0.0002},
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 1024, StepTime: 0.110, SyncTime: 0.0002})
	job := sia.Job{ID: "cifar", Submitted: t0, Models: tr}
	s, _ := sia.New(nil)
	snap := sia.Snapshot{Now: t0, Nodes: []sia.Node{{ID: "n0", Type: "a100", GPUs: 8}}, Jobs: []sia.Job{job}}
	for round := 0; round < 3; round++ {
		plan, err := s.Round(context.Background(), snap)
		if err != nil {
			panic(err)
		}
		d := plan.Decisions[0]
		fmt.Printf("round %d: %s %d GPUs, batch %d = %d GPUs × %d × %d steps\n",
			round, d.Action, d.Allocation.GPUs, d.GlobalBatch, d.Replicas, d.LocalBatch, d.AccumSteps+1)
		// The host applies the decision, the job runs and reports.
		snap.Jobs[0].State.Advance(d)
		_, _ = tr.Observe("a100", bootstrap.Measurement{Nodes: 1, Replicas: d.Replicas, LocalBatch: d.LocalBatch,
			StepTime: 0.02 + 0.0001*float64(d.LocalBatch) + 0.004*float64(d.Replicas-1), SyncTime: 0.004 * float64(d.Replicas-1)})
		snap.Now = snap.Now.Add(10 * time.Minute)
	}
	// Output:
	// round 0: start 1 GPUs, batch 928 = 1 GPUs × 464 × 2 steps
	// round 1: resize 2 GPUs, batch 806 = 2 GPUs × 403 × 1 steps
	// round 2: resize 4 GPUs, batch 2020 = 4 GPUs × 505 × 1 steps
}

// Bad input is reported with a typed error naming the job and field.
func ExampleInputError() {
	s, _ := sia.New(nil)
	_, err := s.Round(context.Background(), sia.Snapshot{
		Now:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Nodes: []sia.Node{{ID: "n0", Type: "X", GPUs: 4}},
		Jobs:  []sia.Job{{ID: "j1", MinGPUs: 8, MaxGPUs: 4, Models: siatest.Table{}}},
	})
	var ie *sia.InputError
	fmt.Println(errors.Is(err, sia.ErrInvalidInput), errors.As(err, &ie), ie.Job, ie.Field)
	fmt.Println(err)
	// Output:
	// true true j1 Jobs[0].MinGPUs
	// sia: invalid input: job "j1": Jobs[0].MinGPUs: 8 exceeds MaxGPUs 4
}

// Options: zero values mean the paper's defaults; Validate names bad fields.
func ExampleOptions() {
	d := (&sia.Options{}).WithDefaults()
	fmt.Println(d.P, d.Lambda, d.ScaleUpFactor, d.MaxGPUsPerJob, d.RestartCost, d.Artifact == nil)
	err := (&sia.Options{P: 0.5, Lambda: 1.1}).Validate()
	fmt.Println(err)
	// Output:
	// -0.5 1.1 2 64 30s true
	// sia: invalid input: Options.Lambda: 1.1 must have the sign opposite to P = 0.5
}

// A job that gets no GPUs says why: here one is larger than the cluster and
// one may only use a type the cluster does not have.
func ExampleQueueReason() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s, _ := sia.New(nil)
	plan, err := s.Round(context.Background(), sia.Snapshot{
		Now:   now,
		Nodes: []sia.Node{{ID: "n0", Type: "X", GPUs: 4}},
		Jobs: []sia.Job{
			{ID: "small", Submitted: now, Models: siatest.Table{"X": {1: 1, 2: 1.9}}},
			{ID: "huge", Submitted: now, MinGPUs: 16, Models: siatest.Table{"X": {16: 10}}},
			{ID: "picky", Submitted: now, Types: []string{"H100"}, Models: siatest.Table{"X": {1: 1}}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range plan.Decisions {
		fmt.Println(d.Job, d.Action, d.Reason)
	}
	// Output:
	// small start none
	// huge queue too-large
	// picky queue no-admissible-type
}
