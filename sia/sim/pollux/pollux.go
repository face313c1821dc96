// Package pollux is the Pollux baseline of the simulator, as the published Sia
// artifact adapts it to heterogeneous clusters (Pollux, OSDI '21).
//
// Pollux is heterogeneity-unaware: it sees the cluster as identical virtual
// nodes of 4 GPUs, keeps one throughput model per job pooled over GPU types,
// and searches allocations with a genetic algorithm (NSGA-II, population 100,
// 100 generations) that maximises the power mean (p = −1) of per-job speedups
// over each job's fair share, discounted by a re-allocation factor. Results
// that mix GPU types are forced to the type with the most GPUs (ties to the
// faster type); the other replicas are dropped for the round.
package pollux

import (
	"context"
	"math"
	"sort"
	"sync/atomic"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia/sim"
)

// Options tune the Pollux baseline. The zero value means the artifact's
// settings.
type Options struct {
	// P is the power-mean exponent (default −1).
	P float64
	// Population and Generations of the genetic algorithm (default 100, 100).
	Population, Generations int
	// Seed makes the search deterministic.
	Seed uint64
	// RestartDelay is the delay assumed by the re-allocation factor in
	// seconds (default 30, hard-coded in the artifact).
	RestartDelay float64
	// CarryPopulation seeds each round's search with the previous round's
	// whole final population. By default only its non-dominated front is
	// carried over, as the published Pollux baseline does (pymoo 0.4 keeps
	// the optimum set of the final population as the result, and the next
	// round starts from it).
	CarryPopulation bool
}

// typeRank orders GPU types from most to least powerful for the tie-break of
// the mixed-type fix (artifact: dgx-ext < azure < quad < rtx < aws).
var typeRank = map[string]int{"a100": 0, "v100": 1, "quad": 2, "rtx": 3, "t4": 4}

type vnode struct {
	typ  string
	node int // real node index within the type
}

// Policy is the Pollux baseline; use one per simulated workload.
type Policy struct {
	opt     Options
	truth   sim.Truth
	refType string
	vnodes  []vnode
	vsize   int
	maxRepl int
	rng     *wyrand
	// base allocation per job: replicas per vnode
	alloc map[string][]int
	// previous population, by job name
	prevPop  [][]int8
	prevJobs []string
}

// New returns a Pollux policy for a cluster and ground truth.
func New(c sim.Cluster, truth sim.Truth, opt Options) *Policy {
	if opt.P == 0 {
		opt.P = -1
	}
	if opt.Population <= 0 {
		opt.Population = 100
	}
	if opt.Generations <= 0 {
		opt.Generations = 100
	}
	if opt.RestartDelay == 0 {
		opt.RestartDelay = 30
	}
	p := &Policy{opt: opt, truth: truth, alloc: map[string][]int{}, rng: &wyrand{s: opt.Seed ^ 0x9e3779b97f4a7c15}}
	p.vsize = 4
	for _, g := range c.Groups {
		p.vsize = gcd(p.vsize, g.GPUsPerNode)
	}
	p.maxRepl = math.MaxInt
	for _, g := range c.Groups {
		for k := 0; k < g.Nodes; k++ {
			for v := 0; v < g.GPUsPerNode/p.vsize; v++ {
				p.vnodes = append(p.vnodes, vnode{g.Type, k})
			}
		}
		n := g.Nodes * g.GPUsPerNode
		if m := sim.MaxPhysicalNodes[g.Type]; m > 0 {
			n = min(n, m*g.GPUsPerNode)
		}
		p.maxRepl = min(p.maxRepl, n)
	}
	if len(c.Groups) > 0 {
		p.refType = c.Groups[0].Type
	}
	return p
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Name implements sim.Policy.
func (p *Policy) Name() string { return "pollux" }

type jobInfo struct {
	job      *sim.Job
	maxRepl  int
	model    goodput.Model
	hasModel bool
	factor   float64
	base     []int8
	speed    []uint64 // (n, r) → speedup's bits, notComputed if not yet; index n*(maxRepl+1)+r
	baseGood float64
	fairRepl int
}

// notComputed marks an entry of jobInfo.speed not yet computed (NaN bits).
var notComputed = math.Float64bits(math.NaN())

// speedup returns job j's goodput on r replicas over n vnodes relative to
// its fair share, caching it per (n, r). The search's workers call it at the
// same time: entries are read and written atomically, and a value computed
// twice is the same (Model.Best is deterministic), so the cache's state never
// changes an answer. s is the calling goroutine's own searcher.
func (j *jobInfo) speedup(s *goodput.Searcher, n, r int) float64 {
	if r == 0 {
		return 0
	}
	if !j.hasModel {
		return float64(r) / float64(j.fairRepl)
	}
	k := -1
	if n <= 16 && r <= j.maxRepl {
		k = n*(j.maxRepl+1) + r
		if b := atomic.LoadUint64(&j.speed[k]); b != notComputed {
			return math.Float64frombits(b)
		}
	}
	v := 0.0
	if c, ok := s.Best(&j.model, n, r); ok && j.baseGood > 0 {
		v = c.Goodput / j.baseGood
	}
	if k >= 0 {
		atomic.StoreUint64(&j.speed[k], math.Float64bits(v))
	}
	return v
}

// Schedule implements sim.Policy.
func (p *Policy) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	if p.truth == nil {
		return nil, &sim.InputError{Field: "Truth", Reason: "no ground truth (the policy was built with a nil sim.Truth)"}
	}
	V := len(p.vnodes)
	jobs := append([]*sim.Job(nil), s.Jobs...)
	sort.SliceStable(jobs, func(a, b int) bool {
		if jobs[a].Attained() != jobs[b].Attained() {
			return jobs[a].Attained() < jobs[b].Attained()
		}
		return jobs[a].Spec.Submit < jobs[b].Spec.Submit
	})
	J := len(jobs)
	var search goodput.Searcher // the fair-share searches; its caches last one round
	out := map[string]sim.Alloc{}
	if J == 0 || V == 0 {
		return out, nil
	}
	total := float64(V * p.vsize)
	fairRepl := int(math.Ceil(total / float64(J)))
	infos := make([]*jobInfo, J)
	base := make([]int8, J*V)
	for i, j := range jobs {
		ji := &jobInfo{job: j, fairRepl: fairRepl}
		minL, maxL := p.truth.LocalRange(j.Spec.App, p.refType)
		ji.maxRepl = min(max(2*j.MaxProfiledReplicas(""), 1), p.maxRepl)
		if minL > 0 {
			ji.maxRepl = min(ji.maxRepl, j.App.MaxBatch/minL)
		}
		ji.maxRepl = max(ji.maxRepl, 1)
		ji.speed = make([]uint64, 17*(ji.maxRepl+1))
		for k := range ji.speed {
			ji.speed[k] = notComputed
		}
		if par, ok := j.Params(""); ok {
			if g, ok := j.Grad(); ok {
				ji.model = goodput.Model{Params: par, Grad: g, InitBatch: j.App.InitBatch, MaxBatch: j.App.MaxBatch,
					Limits: goodput.Limits{MinLocalBatch: max(minL, 1), MaxLocalBatch: max(maxL, minL, 1)}}
				if ji.model.Validate() == nil {
					if c, ok := search.Best(&ji.model, 1, fairRepl); ok && c.Goodput > 0 {
						ji.baseGood = c.Goodput
						ji.hasModel = true
					}
				}
			}
		}
		age := s.Now - j.Spec.Submit
		d := p.opt.RestartDelay
		ji.factor = math.Max(age-float64(j.Restarts())*d, 0) / (age + d)
		if a := p.alloc[j.Spec.Name]; a != nil {
			for v := 0; v < V; v++ {
				base[i*V+v] = int8(a[v])
			}
		}
		ji.base = base[i*V : (i+1)*V]
		infos[i] = ji
	}
	ga := &gaState{rng: p.rng, p: p, jobs: infos, J: J, V: V, cap: p.vsize, base: base, total: total}
	var init [][]int8
	if p.prevPop == nil {
		init = [][]int8{append([]int8(nil), base...)}
	} else {
		idx := map[string]int{}
		for k, n := range p.prevJobs {
			idx[n] = k
		}
		pj := len(p.prevJobs)
		for _, old := range p.prevPop {
			x := make([]int8, J*V)
			for i, ji := range infos {
				if k, ok := idx[ji.job.Spec.Name]; ok && pj > 0 {
					copy(x[i*V:(i+1)*V], old[k*V:(k+1)*V])
				}
			}
			init = append(init, x)
		}
	}
	best, pop, front := ga.run(init)
	p.prevPop = front
	if p.opt.CarryPopulation {
		p.prevPop = pop
	}
	p.prevJobs = p.prevJobs[:0]
	for _, ji := range infos {
		p.prevJobs = append(p.prevJobs, ji.job.Spec.Name)
	}
	// Mixed-type fix and mapping to real nodes.
	for i, ji := range infos {
		row := best[i*V : (i+1)*V]
		count := map[string]int{}
		for v := 0; v < V; v++ {
			if row[v] > 0 {
				count[p.vnodes[v].typ] += int(row[v])
			}
		}
		name := ji.job.Spec.Name
		if len(count) == 0 {
			delete(p.alloc, name)
			continue
		}
		keep := pickType(count)
		a := make([]int, V)
		var nodes []int
		for v := 0; v < V; v++ {
			if row[v] > 0 && p.vnodes[v].typ == keep {
				a[v] = int(row[v])
				for k := 0; k < int(row[v]); k++ {
					nodes = append(nodes, p.vnodes[v].node)
				}
			}
		}
		p.alloc[name] = a
		sort.Ints(nodes)
		out[name] = sim.Alloc{Type: keep, Nodes: nodes}
	}
	for name := range p.alloc {
		if _, ok := out[name]; !ok {
			delete(p.alloc, name)
		}
	}
	return out, ctx.Err()
}

// pickType keeps the type with the most GPUs; a tie between the top two goes
// to the more powerful type.
func pickType(count map[string]int) string {
	type tc struct {
		t string
		c int
	}
	var list []tc
	for t, c := range count {
		list = append(list, tc{t, c})
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].c != list[b].c {
			return list[a].c > list[b].c
		}
		if rank(list[a].t) != rank(list[b].t) {
			return rank(list[a].t) < rank(list[b].t)
		}
		return list[a].t < list[b].t
	})
	return list[0].t
}

func rank(t string) int {
	if r, ok := typeRank[t]; ok {
		return r
	}
	return len(typeRank)
}
