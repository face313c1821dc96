// Package ilptest generates allocation problems for tests, benchmarks and
// held-out instance files: Sia-shaped rounds on the paper's heterogeneous
// cluster at 1×, 8× and 32× scale, and small random problems with pins and
// quotas for checking the solver against BruteForce.
package ilptest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sia-sched/sia/ilp"
)

// NodeGroup is one kind of node in a cluster.
type NodeGroup struct {
	Type        string
	GPUsPerNode int
	Nodes       int
}

// Cluster returns the paper's heterogeneous cluster scaled by k: 6k nodes ×
// 4 T4, 2k × 8 A100 and 3k × 8 RTX (64k GPUs).
func Cluster(k int) []NodeGroup {
	return []NodeGroup{
		{Type: "t4", GPUsPerNode: 4, Nodes: 6 * k},
		{Type: "a100", GPUsPerNode: 8, Nodes: 2 * k},
		{Type: "rtx", GPUsPerNode: 8, Nodes: 3 * k},
	}
}

// Shapes returns the GPU counts of the valid configurations of a node group
// (powers of two within a node, whole nodes beyond), at most maxGPUs.
func Shapes(g NodeGroup, maxGPUs int) []int {
	var s []int
	for r := 1; r <= g.GPUsPerNode && r <= maxGPUs; r *= 2 {
		s = append(s, r)
	}
	for n := 2; n <= g.Nodes && n*g.GPUsPerNode <= maxGPUs; n++ {
		s = append(s, n*g.GPUsPerNode)
	}
	return s
}

// Config describes a Sia-shaped instance.
type Config struct {
	Scale int    // cluster scale k (1, 8, 32 → 64, 512, 2048 GPUs)
	Jobs  int    // number of active jobs
	Seed  uint64 // random seed; same Config → same Problem
	// Power is the fairness exponent p: −0.5 gives a minimisation with
	// values rounded to 0.01 (Grid 0.01) and Unallocated 1.1; +0.5 gives an
	// unrounded maximisation with Unallocated −1.
	Power float64
	// PinFrac is the fraction of running jobs pinned to their current
	// configuration (checkpoint-restore in progress), as long as they fit.
	PinFrac float64
	// MaxGPUs caps a job's options (the paper: 64). 0 means 64.
	MaxGPUs int
}

// MaxScale and MaxJobs bound Config's Scale and Jobs (Validate): 262,144
// GPUs and 200,000 jobs, beyond which Generate's instances stop being
// Sia-shaped rounds and only exhaust memory.
const (
	MaxScale = 4096
	MaxJobs  = 200000
)

// Validate reports the first field of c outside what Generate means by it
// (the instance programs check their flags with it): Scale in 1..MaxScale,
// Jobs in 1..MaxJobs, a finite non-zero Power with |Power| <= 10 (as Sia's
// p), PinFrac in [0, 1] and MaxGPUs >= 0.
func (c Config) Validate() error {
	switch {
	case c.Scale < 1 || c.Scale > MaxScale:
		return fmt.Errorf("scale %d: want 1..%d", c.Scale, MaxScale)
	case c.Jobs < 1 || c.Jobs > MaxJobs:
		return fmt.Errorf("jobs %d: want 1..%d", c.Jobs, MaxJobs)
	case !(c.Power != 0 && math.Abs(c.Power) <= 10):
		return fmt.Errorf("power %v: want a finite non-zero p with |p| <= 10", c.Power)
	case !(c.PinFrac >= 0 && c.PinFrac <= 1):
		return fmt.Errorf("pinned fraction %v: want 0..1", c.PinFrac)
	case c.MaxGPUs < 0:
		return fmt.Errorf("MaxGPUs %d: want >= 0 (0 = 64)", c.MaxGPUs)
	}
	return nil
}

// Generate builds a Sia-shaped allocation problem: per job and GPU type a
// concave speedup curve scaled by a type speed, valid shapes capped at the
// job's own limit and MaxGPUs, the goodput row normalised by its smallest
// entry, configurations other than the job's current one discounted by a
// restart factor, and values = (goodput)^p (rounded to 0.01 for p < 0, and
// clipped at 3000 as the artifact does).
func Generate(c Config) *ilp.Problem {
	if c.Scale <= 0 {
		c.Scale = 1
	}
	if c.MaxGPUs <= 0 {
		c.MaxGPUs = 64
	}
	rng := rand.New(rand.NewPCG(c.Seed, uint64(c.Scale)<<32|uint64(c.Jobs)))
	groups := Cluster(c.Scale)
	p := &ilp.Problem{Capacity: map[string]int{}}
	for _, g := range groups {
		p.Capacity[g.Type] += g.GPUsPerNode * g.Nodes
	}
	round := c.Power < 0
	unalloc := -1.0
	if round {
		p.Sense = ilp.Minimize
		p.Grid = 0.01
		unalloc = 1.1
	} else {
		p.Sense = ilp.Maximize
	}
	speed := map[string][2]float64{"t4": {1, 1}, "rtx": {1.4, 2.6}, "a100": {2.2, 5}}
	used := map[string]int{}
	for i := 0; i < c.Jobs; i++ {
		job := ilp.Job{ID: fmt.Sprintf("j%d", i), Unallocated: unalloc, Pin: -1}
		// job-level limits: a maximum GPU count (batch-size limit or the 2×
		// growth cap) and, rarely, a minimum
		maxG := 1 << rng.IntN(7)
		if maxG > c.MaxGPUs {
			maxG = c.MaxGPUs
		}
		minG := 1
		if rng.IntN(10) == 0 {
			minG = 2
		}
		type cfg struct {
			t string
			g int
			v float64
		}
		var cfgs []cfg
		minV := math.Inf(1)
		for _, grp := range groups {
			sp := speed[grp.Type]
			base := sp[0] + rng.Float64()*(sp[1]-sp[0])
			beta := 0.005 + rng.Float64()*0.15
			net := 0.75 + rng.Float64()*0.2 // multi-node efficiency
			for _, g := range Shapes(grp, maxG) {
				if g < minG {
					continue
				}
				x := base * float64(g) / (1 + beta*float64(g-1))
				if g > grp.GPUsPerNode {
					x *= net
				}
				cfgs = append(cfgs, cfg{grp.Type, g, x})
				minV = math.Min(minV, x)
			}
		}
		// current configuration and restart factor
		cur := -1
		r := 1.0
		if len(cfgs) > 0 && rng.Float64() < 0.7 {
			cur = rng.IntN(len(cfgs))
			r = 0.3 + 0.7*rng.Float64()
		}
		for k, cf := range cfgs {
			g := cf.v / minV * float64(minG)
			if cur >= 0 && k != cur {
				g *= r
			}
			v := math.Pow(g, c.Power)
			if round {
				v = math.Round(v*100) / 100
			}
			v = math.Min(v, 3000)
			job.Options = append(job.Options, ilp.Option{Type: cf.t, GPUs: cf.g, Value: v})
		}
		if cur >= 0 && rng.Float64() < c.PinFrac {
			o := job.Options[cur]
			if used[o.Type]+o.GPUs <= p.Capacity[o.Type] {
				used[o.Type] += o.GPUs
				job.Pin = cur
			}
		}
		p.Jobs = append(p.Jobs, job)
	}
	return p
}

// Small returns a random small problem for brute-force checks: up to maxJobs
// jobs with up to 4 options each over two or three types with small
// capacities, random values (on a 0.01 grid when grid is set), random sense,
// per-job Unallocated values, pins that hold, reservations and quota rows
// (some over all jobs, some over one type or a set of types, some counting
// only options of at least MinGPUs GPUs).
func Small(rng *rand.Rand, maxJobs int, grid bool) *ilp.Problem {
	types := []string{"a", "b", "c"}[:2+rng.IntN(2)]
	p := &ilp.Problem{Capacity: map[string]int{}, Reserved: map[string]int{}}
	if rng.IntN(2) == 1 {
		p.Sense = ilp.Maximize
	}
	for _, t := range types {
		p.Capacity[t] = rng.IntN(9)
		if p.Capacity[t] > 0 && rng.IntN(4) == 0 {
			p.Reserved[t] = rng.IntN(p.Capacity[t] + 1)
		}
	}
	val := func() float64 {
		v := rng.Float64()*4 - 1
		if grid {
			return math.Round(v*100) / 100
		}
		return v
	}
	if grid {
		p.Grid = 0.01
	}
	n := rng.IntN(maxJobs + 1)
	used := map[string]int{}
	for i := 0; i < n; i++ {
		j := ilp.Job{ID: fmt.Sprintf("s%d", i), Unallocated: val(), Pin: -1}
		if rng.IntN(3) == 0 {
			j.Unallocated = 0
		}
		k := rng.IntN(5)
		for o := 0; o < k; o++ {
			t := types[rng.IntN(len(types))]
			j.Options = append(j.Options, ilp.Option{Type: t, GPUs: 1 + rng.IntN(4), Value: val()})
		}
		if k > 0 && rng.IntN(6) == 0 {
			pin := rng.IntN(k)
			o := j.Options[pin]
			if used[o.Type]+o.GPUs <= p.Capacity[o.Type]-p.Reserved[o.Type] {
				used[o.Type] += o.GPUs
				j.Pin = pin
			}
		}
		p.Jobs = append(p.Jobs, j)
	}
	// quota rows over random job subsets; limits respect the pins
	for q := rng.IntN(3); q > 0 && n > 0; q-- {
		qt := ""
		if rng.IntN(3) > 0 {
			qt = types[rng.IntN(len(types))]
		}
		quota := ilp.Quota{Name: fmt.Sprintf("q%d", q), Type: qt}
		if qt == "" && rng.IntN(2) == 0 {
			// a set of types (a permutation's prefix of at least one)
			for _, k := range rng.Perm(len(types))[:1+rng.IntN(len(types))] {
				quota.Types = append(quota.Types, types[k])
			}
		}
		if rng.IntN(3) == 0 {
			quota.MinGPUs = rng.IntN(5) // options with fewer GPUs do not count
		}
		all := rng.IntN(4) == 0
		quota.AllJobs = all
		pinned := 0
		for i := 0; i < n; i++ {
			if all || rng.IntN(2) == 0 {
				if !all {
					quota.Jobs = append(quota.Jobs, i)
				}
				if j := p.Jobs[i]; j.Pin >= 0 && quota.Counts(j.Options[j.Pin]) {
					pinned += j.Options[j.Pin].GPUs
				}
			}
		}
		quota.Limit = pinned + rng.IntN(6)
		p.Quotas = append(p.Quotas, quota)
	}
	return p
}

// BruteForce returns an optimal assignment of a valid problem by trying
// every combination of choices (including none), and whether any feasible
// assignment exists. Ties keep the first combination in lexicographic order
// of the choice vector. It is exponential: meant for problems with a
// handful of jobs.
func BruteForce(p *ilp.Problem) (best []int, obj float64, ok bool) {
	n := len(p.Jobs)
	a := make([]int, n)
	var rec func(i int)
	better := func(v float64) bool {
		if !ok {
			return true
		}
		if p.Sense == ilp.Maximize {
			return v > obj
		}
		return v < obj
	}
	rec = func(i int) {
		if i == n {
			if p.Check(a) == nil {
				if v := p.Objective(a); better(v) {
					best, obj, ok = append([]int(nil), a...), v, true
				}
			}
			return
		}
		lo, hi := -1, len(p.Jobs[i].Options)-1
		if pin := p.Jobs[i].Pin; pin >= 0 {
			lo, hi = pin, pin
		}
		for k := lo; k <= hi; k++ {
			a[i] = k
			rec(i + 1)
		}
	}
	rec(0)
	return best, obj, ok
}
