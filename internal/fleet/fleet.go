// Package fleet generates the synthetic GPU fleets that the round-deadline
// example and sia's placement benchmark share: several GPU types with mixed
// node sizes (4 to 16 GPUs per node, up to two sizes per type, 6-, 10- and
// 12-GPU nodes among them) and jobs with random goodput models. It does not
// import package sia (sia's own tests use it): its nodes and jobs are plain
// descriptions each caller turns into sia.Node and sia.Job.
package fleet

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// Config describes one fleet: about GPUs GPUs of the first Types types of
// TypeNames, and the seed its snapshot's generator starts from.
type Config struct {
	Jobs, GPUs, Types int
	Seed              uint64
}

// TypeNames are the GPU types a fleet draws from, slowest first.
var TypeNames = []string{"t4", "v100", "l4", "rtx", "l40s", "a10", "a100", "h100"}

// nodeSizes are the GPUs per node a type's nodes may have.
var nodeSizes = []int{4, 6, 8, 8, 10, 12, 16}

// Node is one node of a fleet.
type Node struct {
	ID, Type string
	GPUs     int
}

// Kind is a job's scaling kind.
type Kind int

// The kinds of jobs a fleet has.
const (
	Adaptive      Kind = iota // batch size and GPUs chosen by the scheduler
	Rigid                     // a fixed number of GPUs (Job.GPUs)
	StrongScaling             // fixed batch size, up to Job.MaxGPUs GPUs
)

// Job is one job of a fleet.
type Job struct {
	ID          string
	Submitted   time.Time
	Models      bootstrap.Static
	RestartCost time.Duration
	Kind        Kind
	// GPUs is a rigid job's GPU count; MinGPUs and MaxGPUs bound the
	// others (0: unbounded).
	GPUs, MinGPUs, MaxGPUs int
}

// Cluster returns the fleet's nodes: each type gets about GPUs/Types GPUs
// in nodes of one or two sizes.
func (c Config) Cluster(rng *rand.Rand) []Node {
	var cl []Node
	for t := 0; t < c.Types; t++ {
		name := TypeNames[t]
		sizes := []int{nodeSizes[rng.IntN(len(nodeSizes))]}
		if rng.IntN(2) == 0 {
			sizes = append(sizes, nodeSizes[rng.IntN(len(nodeSizes))])
		}
		left := c.GPUs / c.Types
		for k := 0; left > 0; k++ {
			g := sizes[k%len(sizes)]
			cl = append(cl, Node{ID: fmt.Sprintf("%s-%d", name, k), Type: name, GPUs: g})
			left -= g
		}
	}
	return cl
}

// Models returns a job's goodput models on the fleet's types: random
// compute, network and gradient-noise parameters (a faster type computes
// faster), and a type or two excluded now and then.
func (c Config) Models(rng *rand.Rand) bootstrap.Static {
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
		out[TypeNames[t]] = goodput.Model{
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

// JobList returns n jobs submitted during the hour before now: mostly
// adaptive, some rigid (1 to 12 GPUs), strong-scaling or with a minimum.
func (c Config) JobList(rng *rand.Rand, n int, now time.Time) []Job {
	out := make([]Job, n)
	for i := range out {
		j := Job{
			ID:        fmt.Sprintf("job-%d", i),
			Submitted: now.Add(-time.Duration(1+rng.IntN(3600)) * time.Second),
			Models:    c.Models(rng),
		}
		j.RestartCost = time.Duration(10+rng.IntN(240)) * time.Second
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
		out[i] = j
	}
	return out
}
