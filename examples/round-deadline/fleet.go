package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// fleetConfig describes one snapshot of the corpus: a fleet of several GPU
// types with mixed node sizes (4 to 16 GPUs per node, up to two sizes per
// type, 6-, 10- and 12-GPU nodes among them) and jobs with random goodput
// models, after one round has placed half of them and a third of those
// have finished.
type fleetConfig struct {
	Jobs, GPUs, Types int
	Seed              uint64
}

func (c fleetConfig) name() string {
	return fmt.Sprintf("jobs=%d/gpus=%d/types=%d/seed=%d", c.Jobs, c.GPUs, c.Types, c.Seed)
}

// corpus is the benchmark's set of snapshots.
var corpus = []fleetConfig{
	{Jobs: 1000, GPUs: 2000, Types: 3, Seed: 1},
	{Jobs: 2500, GPUs: 2048, Types: 4, Seed: 2},
	{Jobs: 2500, GPUs: 4000, Types: 5, Seed: 3},
	{Jobs: 5000, GPUs: 8000, Types: 6, Seed: 4},
	{Jobs: 5000, GPUs: 16000, Types: 8, Seed: 5},
}

var typeNames = []string{"t4", "v100", "l4", "rtx", "l40s", "a10", "a100", "h100"}

// nodeSizes are the GPUs per node a type's nodes may have.
var nodeSizes = []int{4, 6, 8, 8, 10, 12, 16}

// cluster returns the fleet's nodes: each type gets about GPUs/Types GPUs
// in nodes of one or two sizes.
func (c fleetConfig) cluster(rng *rand.Rand) []sia.Node {
	var cl []sia.Node
	for t := 0; t < c.Types; t++ {
		name := typeNames[t]
		sizes := []int{nodeSizes[rng.IntN(len(nodeSizes))]}
		if rng.IntN(2) == 0 {
			sizes = append(sizes, nodeSizes[rng.IntN(len(nodeSizes))])
		}
		left := c.GPUs / c.Types
		for k := 0; left > 0; k++ {
			g := sizes[k%len(sizes)]
			cl = append(cl, sia.Node{ID: fmt.Sprintf("%s-%d", name, k), Type: name, GPUs: g})
			left -= g
		}
	}
	return cl
}

// models returns a job's goodput models on the fleet's types: random
// compute, network and gradient-noise parameters (a faster type computes
// faster), and a type or two excluded now and then.
func (c fleetConfig) models(rng *rand.Rand) bootstrap.Static {
	out := bootstrap.Static{}
	m0 := []int{8, 16, 32, 64, 128, 256}[rng.IntN(6)]
	maxB := m0 * (8 + rng.IntN(56))
	noise := float64(m0) * (0.05 + 2*rng.Float64())
	for t := 0; t < c.Types; t++ {
		if t > 0 && c.Types > 3 && rng.IntN(8) == 0 {
			continue // the job cannot run on this type
		}
		speed := 1 + float64(t)/2 // later types are faster
		jit := func() float64 { return 0.7 + 0.6*rng.Float64() }
		bmax := max(m0/2, 4) * (1 + rng.IntN(8))
		out[typeNames[t]] = goodput.Model{
			Params: goodput.Params{
				AlphaC: 0.02 * jit() / speed, BetaC: 0.001 * jit() / speed,
				AlphaN: 0.1 * jit(), BetaN: 0.01 * jit(),
				AlphaR: 0.03 * jit(), BetaR: 0.003 * jit(),
				Gamma: 1 + rng.Float64(),
			},
			Grad:      goodput.GradStats{Sqr: 1, Var: noise},
			InitBatch: m0, MaxBatch: maxB,
			Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: bmax},
		}
	}
	return out
}

// jobs returns n jobs submitted during the hour before now: mostly
// adaptive, some rigid (1 to 12 GPUs), strong-scaling or with a minimum.
func (c fleetConfig) jobs(rng *rand.Rand, n int, now time.Time) []sia.Job {
	out := make([]sia.Job, n)
	for i := range out {
		j := sia.Job{
			ID:        fmt.Sprintf("job-%d", i),
			Submitted: now.Add(-time.Duration(1+rng.IntN(3600)) * time.Second),
			Models:    c.models(rng),
		}
		j.State.RestartCost = time.Duration(10+rng.IntN(240)) * time.Second
		switch x := rng.IntN(20); {
		case x == 0:
			j.Kind = sia.Rigid
			j.GPUs = []int{1, 2, 4, 6, 8, 12}[rng.IntN(6)]
		case x == 1:
			j.Kind = sia.StrongScaling
			j.MaxGPUs = 16
		case x == 2:
			j.MinGPUs = 2
		}
		out[i] = j
	}
	return out
}

// snapshot returns the configuration's snapshot: half the jobs placed by
// a round (under a setup deadline), a third of those finished since
// (their GPUs free), one in fifty of the others non-preemptible, and the
// other half queued.
func (c fleetConfig) snapshot(setup time.Duration) (sia.Snapshot, error) {
	rng := rand.New(rand.NewPCG(c.Seed, 11))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	jobs := c.jobs(rng, c.Jobs*6/5, now)
	snap := sia.Snapshot{Now: now, Nodes: c.cluster(rng), Jobs: jobs[:len(jobs)/2]}
	s, err := sia.New(nil)
	if err != nil {
		return snap, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setup)
	p, err := s.Round(ctx, snap)
	cancel()
	if err != nil {
		return snap, err
	}
	snap.Advance(&p, now.Add(time.Minute))
	kept := snap.Jobs[:0]
	for i, j := range snap.Jobs {
		j.State.RestoreUntil = time.Time{} // no restores in progress
		if i%3 == 0 && j.State.Current.Running() {
			continue
		}
		if i%50 == 1 && j.State.Current.Running() {
			j.NonPreemptible = true
		}
		kept = append(kept, j)
	}
	snap.Jobs = append(kept, jobs[len(jobs)/2:]...)
	return snap, nil
}
