package sia

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// Built-in application models for tests and benchmarks, shaped after the
// published artifact's per-model facts: initial and largest batch,
// smallest per-GPU batch, per-type memory limits and 1-GPU speeds on t4
// (aws), a100 (dgx-ext) and rtx.
type benchApp struct {
	name        string
	m0, maxB    int
	bmin        int
	bmax        map[string]int
	ac, bc      map[string]float64 // compute: T_acc = ac + bc·b
	an, bn      float64            // inter-node all-reduce (a100 is 2× faster)
	noise       float64            // var/sqr (gradient noise)
	restartCost time.Duration
}

var benchApps = []benchApp{
	{name: "cifar10", m0: 128, maxB: 4096, bmin: 32,
		bmax: map[string]int{"t4": 1024, "a100": 4096, "rtx": 1024},
		ac:   map[string]float64{"t4": 0.01, "a100": 0.005, "rtx": 0.01},
		bc:   map[string]float64{"t4": 0.00068, "a100": 0.0001, "rtx": 0.0003},
		an:   0.05, bn: 0.005, noise: 10, restartCost: 30 * time.Second},
	{name: "bert", m0: 12, maxB: 384, bmin: 4,
		bmax: map[string]int{"t4": 12, "a100": 48, "rtx": 12},
		ac:   map[string]float64{"t4": 0.08, "a100": 0.03, "rtx": 0.03},
		bc:   map[string]float64{"t4": 0.07, "a100": 0.0065, "rtx": 0.035},
		an:   0.2, bn: 0.02, noise: 30, restartCost: 120 * time.Second},
	{name: "deepspeech2", m0: 20, maxB: 640, bmin: 10,
		bmax: map[string]int{"t4": 80, "a100": 320, "rtx": 57},
		ac:   map[string]float64{"t4": 0.1, "a100": 0.1, "rtx": 0.1},
		bc:   map[string]float64{"t4": 0.03, "a100": 0.0125, "rtx": 0.017},
		an:   0.15, bn: 0.015, noise: 20, restartCost: 25 * time.Second},
	{name: "imagenet", m0: 200, maxB: 12800, bmin: 20,
		bmax: map[string]int{"t4": 200, "a100": 800, "rtx": 200},
		ac:   map[string]float64{"t4": 0.02, "a100": 0.02, "rtx": 0.02},
		bc:   map[string]float64{"t4": 0.0045, "a100": 0.00094, "rtx": 0.0024},
		an:   0.2, bn: 0.01, noise: 40, restartCost: 250 * time.Second},
	{name: "yolov3", m0: 8, maxB: 512, bmin: 4,
		bmax: map[string]int{"t4": 16, "a100": 32, "rtx": 8},
		ac:   map[string]float64{"t4": 0.04, "a100": 0.05, "rtx": 0.04},
		bc:   map[string]float64{"t4": 0.033, "a100": 0.016, "rtx": 0.08},
		an:   0.1, bn: 0.01, noise: 15, restartCost: 45 * time.Second},
}

// models returns the app's models on the three types, perturbed by rng so
// that no two jobs share a model (as after a few rounds of refits).
func (a benchApp) models(rng *rand.Rand) bootstrap.Static {
	out := bootstrap.Static{}
	jit := func() float64 { return 0.8 + 0.4*rng.Float64() }
	noise := a.noise * jit()
	for _, t := range []string{"t4", "a100", "rtx"} {
		net := 1.0
		if t == "a100" {
			net = 0.5
		}
		out[t] = goodput.Model{
			Params: goodput.Params{
				AlphaC: a.ac[t] * jit(), BetaC: a.bc[t] * jit(),
				AlphaN: a.an * net * jit(), BetaN: a.bn * net * jit(),
				AlphaR: a.an * net / 3 * jit(), BetaR: a.bn * net / 3 * jit(),
				Gamma: 1 + rng.Float64(),
			},
			Grad:      goodput.GradStats{Sqr: 1, Var: noise},
			InitBatch: a.m0, MaxBatch: a.maxB,
			Limits: goodput.Limits{MinLocalBatch: min(a.bmin, a.bmax[t]), MaxLocalBatch: a.bmax[t]},
		}
	}
	return out
}

// heteroCluster is the paper's heterogeneous cluster (6 × 4 t4, 2 × 8 a100,
// 3 × 8 rtx = 64 GPUs) scaled k times.
func heteroCluster(k int) []Node {
	var c []Node
	add := func(t string, n, g int) {
		for i := 0; i < n*k; i++ {
			c = append(c, Node{ID: fmt.Sprintf("%s-%d", t, i), Type: t, GPUs: g})
		}
	}
	add("t4", 6, 4)
	add("a100", 2, 8)
	add("rtx", 3, 8)
	return c
}

// genJobs returns n jobs of the built-in applications submitted during the
// hour before now, a few of them rigid, strong-scaling or bounded.
func genJobs(rng *rand.Rand, n int, now time.Time) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		a := benchApps[rng.IntN(len(benchApps))]
		j := Job{
			ID:          fmt.Sprintf("%s-%d", a.name, i),
			Application: a.name,
			Submitted:   now.Add(-time.Duration(rng.IntN(3600)) * time.Second),
			Models:      a.models(rng),
		}
		j.State.RestartCost = a.restartCost
		switch x := rng.IntN(20); {
		case x == 0:
			j.Kind = Rigid
			j.GPUs = []int{1, 2, 4, 6, 8, 12}[rng.IntN(6)]
		case x == 1:
			j.Kind = StrongScaling
			j.MaxGPUs = 16
		case x == 2:
			j.MinGPUs = 2
		}
		jobs[i] = j
	}
	return jobs
}

// applyPlan updates the snapshot's job states as a host applying the plan
// would, and advances time by a round.
func applyPlan(snap *Snapshot, p *Plan, round time.Duration) {
	snap.Advance(p, snap.Now.Add(round))
	// The benchmarks' snapshots have no restores in progress (as before
	// the library recorded them), so that every job's row is full.
	for i := range snap.Jobs {
		snap.Jobs[i].State.RestoreUntil = time.Time{}
	}
}

// steadySnapshot returns a snapshot of n jobs on the cluster scaled k times
// after a few warm-up rounds, so that jobs run, have grown and hold GPUs.
func steadySnapshot(k, n int, seed uint64) (Snapshot, error) {
	rng := rand.New(rand.NewPCG(seed, 42))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	snap := Snapshot{Now: now, Nodes: heteroCluster(k), Jobs: genJobs(rng, n, now)}
	s, err := New(nil)
	if err != nil {
		return Snapshot{}, err
	}
	for r := 0; r < 4; r++ {
		p, err := s.Round(context.Background(), snap)
		if err != nil {
			return Snapshot{}, err
		}
		applyPlan(&snap, &p, time.Minute)
	}
	return snap, nil
}
