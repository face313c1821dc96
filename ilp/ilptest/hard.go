package ilptest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sia-sched/sia/ilp"
)

// HardConfig describes an instance of the hard corpus: a fleet of several
// GPU types with mixed node shapes (1 to 16 GPUs per node, several shapes
// per type), jobs with arbitrary concave goodput models over every
// configuration a node shape admits (partial nodes, whole nodes and
// multiples of whole nodes), pins, queue quotas over sets of types and a
// placement limit on large configurations.
type HardConfig struct {
	Jobs  int    // active jobs (the corpus: 1,000 to 5,000)
	GPUs  int    // approximate total GPUs (the corpus: 2,000 to 16,000)
	Types int    // GPU types, 1 to 8 (the corpus: 3 to 8)
	Seed  uint64 // same HardConfig → same Problem
	// Power is the fairness exponent p: < 0 gives a minimisation of
	// goodput^p rounded to 0.01 (Grid 0.01, Unallocated 1.1), > 0 an
	// unrounded maximisation (Unallocated 0).
	Power   float64
	PinFrac float64 // fraction of running jobs pinned to their current configuration
	Quotas  bool    // add queue quotas over sets of types and a large-configuration limit
	// Queues, when positive (with Quotas), replaces the two queue quotas
	// over disjoint thirds of the jobs by Queues quotas that overlap: each
	// job is in each queue with probability one half, and each queue's
	// limit is QueueShare (default 0.15) of its types' capacity.
	Queues     int
	QueueShare float64
}

// nodeShapes are the GPUs per node a type's nodes may have.
var nodeShapes = []int{1, 2, 4, 6, 8, 8, 8, 10, 12, 16}

// hardTypes are the type names of the corpus, fastest last.
var hardTypes = []string{"t4", "v100", "l4", "rtx", "l40s", "a10", "a100", "h100"}

// nodeCounts returns the GPU counts a configuration may have on nodes of n
// GPUs: the divisors of n within one node, then multiples of n by 2, 3, 4,
// 6, 8, ... nodes up to maxGPUs and the type's node count.
func nodeCounts(n, nodes, maxGPUs int) []int {
	var s []int
	for d := 1; d <= n && d <= maxGPUs; d++ {
		if n%d == 0 {
			s = append(s, d)
		}
	}
	for _, k := range []int{2, 3, 4, 6, 8, 12, 16, 24, 32} {
		if k <= nodes && k*n <= maxGPUs {
			s = append(s, k*n)
		}
	}
	return s
}

// concave returns a random concave, increasing speedup model x(g) with
// x(0) = 0: Amdahl-like, power law, logarithmic or saturating.
func concave(rng *rand.Rand) func(g float64) float64 {
	switch rng.IntN(4) {
	case 0:
		beta := 0.005 + rng.Float64()*0.2
		return func(g float64) float64 { return g / (1 + beta*(g-1)) }
	case 1:
		a := 0.4 + 0.6*rng.Float64()
		return func(g float64) float64 { return math.Pow(g, a) }
	case 2:
		b := 0.05 + rng.Float64()
		return func(g float64) float64 { return math.Log1p(b*g) / math.Log1p(b) }
	default:
		s := 2 + rng.Float64()*60
		return func(g float64) float64 { return (1 - math.Exp(-g/s)) / (1 - math.Exp(-1/s)) }
	}
}

// Hard builds an instance of the hard corpus (see HardConfig).
func Hard(c HardConfig) *ilp.Problem {
	c.Types = min(max(c.Types, 1), len(hardTypes))
	rng := rand.New(rand.NewPCG(c.Seed, uint64(c.Jobs)<<32|uint64(c.GPUs)<<4|uint64(c.Types)))
	p := &ilp.Problem{Capacity: map[string]int{}, Sense: ilp.Maximize}
	unalloc := 0.0
	round := c.Power < 0
	if round {
		p.Sense, p.Grid, unalloc = ilp.Minimize, 0.01, 1.1
	}
	// the fleet: per type one or two node shapes, GPUs split unevenly
	type shape struct{ n, nodes int }
	types := hardTypes[len(hardTypes)-c.Types:]
	shapes := map[string][]shape{}
	speed := map[string]float64{}
	weights := make([]float64, len(types))
	wsum := 0.0
	for k := range weights {
		weights[k] = 0.5 + rng.Float64()
		wsum += weights[k]
	}
	for k, t := range types {
		speed[t] = 1 + 4*float64(k)/float64(max(1, len(types)-1))*(0.8+0.4*rng.Float64())
		gpus := max(16, int(float64(c.GPUs)*weights[k]/wsum))
		ns := []int{nodeShapes[rng.IntN(len(nodeShapes))]}
		if rng.IntN(2) == 0 {
			if o := nodeShapes[rng.IntN(len(nodeShapes))]; o != ns[0] {
				ns = append(ns, o)
			}
		}
		for x, n := range ns {
			part := gpus / len(ns)
			if x == 0 {
				part = gpus - (len(ns)-1)*(gpus/len(ns))
			}
			nodes := max(1, part/n)
			shapes[t] = append(shapes[t], shape{n, nodes})
			p.Capacity[t] += n * nodes
		}
	}
	used := map[string]int{}
	for i := range c.Jobs {
		job := ilp.Job{ID: fmt.Sprintf("h%d", i), Unallocated: unalloc, Pin: -1}
		maxG := []int{1, 2, 4, 8, 16, 32, 64, 128}[rng.IntN(8)]
		model := concave(rng)
		type cfg struct {
			t string
			g int
			x float64
		}
		var cfgs []cfg
		for _, t := range types {
			if rng.IntN(12) == 0 {
				continue // the job cannot use this type
			}
			sp := speed[t] * (0.6 + 0.8*rng.Float64())
			net := 0.6 + 0.35*rng.Float64() // multi-node efficiency
			seen := map[int]bool{}
			for _, sh := range shapes[t] {
				for _, g := range nodeCounts(sh.n, sh.nodes, maxG) {
					if seen[g] {
						continue
					}
					seen[g] = true
					x := sp * model(float64(g))
					if g > sh.n {
						x *= net
					}
					cfgs = append(cfgs, cfg{t, g, x})
				}
			}
		}
		slices.SortFunc(cfgs, func(a, b cfg) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.g, b.g))
		})
		minX := math.Inf(1)
		for _, cf := range cfgs {
			minX = math.Min(minX, cf.x)
		}
		cur, restart := -1, 1.0
		if len(cfgs) > 0 && rng.Float64() < 0.6 {
			cur = rng.IntN(len(cfgs))
			restart = 0.4 + 0.6*rng.Float64()
		}
		for k, cf := range cfgs {
			g := cf.x / minX
			if cur >= 0 && k != cur {
				g *= restart
			}
			v := math.Pow(g, c.Power)
			if round {
				v = math.Round(v*100) / 100
			}
			job.Options = append(job.Options, ilp.Option{Type: cf.t, GPUs: cf.g, Value: math.Min(v, 3000)})
		}
		if cur >= 0 && rng.Float64() < c.PinFrac {
			o := job.Options[cur]
			if used[o.Type]+o.GPUs <= p.Capacity[o.Type]/2 {
				used[o.Type] += o.GPUs
				job.Pin = cur
			}
		}
		p.Jobs = append(p.Jobs, job)
	}
	if c.Quotas {
		hardQuotas(p, rng, types, c)
	}
	return p
}

// hardQuotas adds queue quotas (a third of the jobs each, over a random set
// of the types, limited to a share of those types' capacity) and a limit on
// configurations of at least 32 GPUs, all above what the pins need.
func hardQuotas(p *ilp.Problem, rng *rand.Rand, types []string, c HardConfig) {
	if c.Queues > 0 {
		overlappingQuotas(p, rng, types, c)
	}
	for q := range 2 {
		if c.Queues > 0 {
			break
		}
		quota, capSum := queueOverTypes(p, rng, types, fmt.Sprintf("queue%d", q))
		for i := range p.Jobs {
			if i%3 == q {
				quota.Jobs = append(quota.Jobs, i)
			}
		}
		quota.Limit = int(float64(capSum) * (0.15 + 0.2*rng.Float64()))
		p.Quotas = append(p.Quotas, quota)
	}
	total := 0
	for _, c := range p.Capacity {
		total += c
	}
	p.Quotas = append(p.Quotas, ilp.Quota{Name: "large", AllJobs: true, MinGPUs: 32, Limit: total / 4})
	// limits hold the pins
	for qi := range p.Quotas {
		q := &p.Quotas[qi]
		for _, ji := range q.Jobs {
			if j := p.Jobs[ji]; j.Pin >= 0 && q.Counts(j.Options[j.Pin]) {
				q.Limit += j.Options[j.Pin].GPUs
			}
		}
		if q.AllJobs {
			for _, j := range p.Jobs {
				if j.Pin >= 0 && q.Counts(j.Options[j.Pin]) {
					q.Limit += j.Options[j.Pin].GPUs
				}
			}
		}
	}
}

// queueOverTypes returns a quota named name over a random non-empty set
// of the types (sorted), and the sum of their capacities.
func queueOverTypes(p *ilp.Problem, rng *rand.Rand, types []string, name string) (ilp.Quota, int) {
	quota := ilp.Quota{Name: name}
	for _, k := range rng.Perm(len(types))[:1+rng.IntN(len(types))] {
		quota.Types = append(quota.Types, types[k])
	}
	slices.Sort(quota.Types)
	capSum := 0
	for _, t := range quota.Types {
		capSum += p.Capacity[t]
	}
	return quota, capSum
}

// overlappingQuotas adds c.Queues queue quotas, each over a random set of
// the types and about half the jobs, limited to c.QueueShare of those
// types' capacity (see HardConfig.Queues).
func overlappingQuotas(p *ilp.Problem, rng *rand.Rand, types []string, c HardConfig) {
	share := c.QueueShare
	if share <= 0 {
		share = 0.15
	}
	for q := range c.Queues {
		quota, capSum := queueOverTypes(p, rng, types, fmt.Sprintf("queue%d", q))
		for i := range p.Jobs {
			if rng.IntN(2) == 0 {
				quota.Jobs = append(quota.Jobs, i)
			}
		}
		quota.Limit = int(float64(capSum) * share)
		p.Quotas = append(p.Quotas, quota)
	}
}

// HardExtra are harder quota instances beside the corpus, of 3,000 to
// 5,000 jobs: six or twelve overlapping queue quotas, tight ones (5 % of
// their types' capacity), for p = ±0.5 and 8 types; the deadline
// program runs them with -extra.
func HardExtra() []HardConfig {
	var cs []HardConfig
	for k, x := range []struct {
		jobs, gpus, types, queues int
		share                     float64
	}{
		{3000, 8000, 6, 6, 0.15}, {5000, 16000, 8, 6, 0.15}, {5000, 16000, 8, 12, 0.05}, {4000, 12000, 8, 12, 0.08},
	} {
		for y, pw := range []float64{-0.5, 0.5} {
			cs = append(cs, HardConfig{Jobs: x.jobs, GPUs: x.gpus, Types: x.types, Seed: uint64(9100 + 2*k + y),
				Power: pw, PinFrac: 0.05, Quotas: true, Queues: x.queues, QueueShare: x.share})
		}
	}
	return cs
}

// HardCorpus is the deadline benchmark's corpus: Hard instances from 1,000
// jobs on 2,000 GPUs of 3 types to 5,000 jobs on 16,000 GPUs of 8 types, for
// p = −0.5 (rounded, minimised) and p = +0.5 (maximised), with pins and,
// on every other instance, quotas. They are generated from their seeds at
// run time.
func HardCorpus() []HardConfig {
	var cs []HardConfig
	for k, sz := range []struct{ jobs, gpus, types int }{
		{1000, 2000, 3}, {1500, 4000, 4}, {2500, 6000, 5}, {3000, 8000, 6}, {4000, 12000, 7}, {5000, 16000, 8},
	} {
		for x, pw := range []float64{-0.5, 0.5} {
			cs = append(cs, HardConfig{Jobs: sz.jobs, GPUs: sz.gpus, Types: sz.types, Seed: uint64(9000 + 2*k + x),
				Power: pw, PinFrac: 0.05, Quotas: (k+x)%2 == 1})
		}
	}
	return cs
}

// Name names a HardConfig for tables, e.g. "j1000-g2000-t3-p-0.5-q".
func (c HardConfig) Name() string {
	s := fmt.Sprintf("j%d-g%d-t%d-p%+.1f", c.Jobs, c.GPUs, c.Types, c.Power)
	if c.Quotas {
		s += "-q"
	}
	if c.Quotas && c.Queues > 0 {
		s += fmt.Sprintf("%d", c.Queues)
		if c.QueueShare > 0 {
			s += fmt.Sprintf("s%g", c.QueueShare)
		}
	}
	return s
}
