package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sia-sched/sia/internal/fleet"
	"github.com/sia-sched/sia/sia"
)

// fleetConfig describes one snapshot of the corpus: a fleet of
// internal/fleet (several GPU types with mixed node sizes, 4 to 16 GPUs per
// node, and jobs with random goodput models) after one round has placed
// half of its jobs and a third of those have finished.
type fleetConfig fleet.Config

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

// cluster returns the fleet's nodes (see fleet.Config.Cluster).
func (c fleetConfig) cluster(rng *rand.Rand) []sia.Node {
	var cl []sia.Node
	for _, n := range fleet.Config(c).Cluster(rng) {
		cl = append(cl, sia.Node{ID: n.ID, Type: n.Type, GPUs: n.GPUs})
	}
	return cl
}

// jobs returns the fleet's n jobs submitted during the hour before now
// (see fleet.Config.JobList).
func (c fleetConfig) jobs(rng *rand.Rand, n int, now time.Time) []sia.Job {
	out := make([]sia.Job, n)
	for i, fj := range fleet.Config(c).JobList(rng, n, now) {
		j := sia.Job{ID: fj.ID, Submitted: fj.Submitted, Models: fj.Models, GPUs: fj.GPUs, MinGPUs: fj.MinGPUs, MaxGPUs: fj.MaxGPUs}
		j.State.RestartCost = fj.RestartCost
		switch fj.Kind {
		case fleet.Rigid:
			j.Kind = sia.Rigid
		case fleet.StrongScaling:
			j.Kind = sia.StrongScaling
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
