// Package gavel is the Gavel baseline of the simulator (Gavel, OSDI '20, as the published Sia artifact runs it):
// heterogeneity-aware max-sum-throughput over time shares per GPU type, with
// jobs rigid at the workload's requested GPU count and batch size.
//
// Each round an LP gives every active job a fraction X[j,c] of time on each
// type c maximising Σ T[j,c]·X[j,c] (T = optimizer steps per second of the whole
// job on its requested GPUs, from the true profiles) subject to
// Σ_j replicas_j·X[j,c] ≤ GPUs of c and Σ_c X[j,c] ≤ 1. Jobs are then ranked by
// priority X[j,c] ÷ (share of time c received so far) and handed GPUs in that
// order, at most one type per job per round; jobs keep their GPUs when they can.
package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/sia-sched/sia/sia/sim"
)

// ErrLP reports that the time-share LP could not be solved.
var ErrLP = errors.New("gavel: LP failed")

// Round is what an Allocator sees each round: the active jobs, Gavel's
// throughput matrix and the job state Gavel's policies read (Gavel, OSDI '20,
// §3: the policies compute time shares X from it).
type Round struct {
	// Now is the simulated time and Length the round length, in seconds.
	Now, Length float64
	// Types are the GPU types in cluster order; Capacity their GPUs.
	Types    []string
	Capacity []int
	// Jobs are the active jobs; T[i][c] is job i's throughput on Types[c]
	// (optimizer steps per second at its requested size, see Throughput).
	Jobs []*sim.Job
	T    [][]float64
}

// Allocator computes Gavel's time shares X[i][c] ∈ [0, 1] (job i's fraction
// of the round on type c) for a round, under Gavel's base constraints
// Σ_i Replicas_i·X[i][c] ≤ Capacity[c] and Σ_c X[i][c] ≤ 1. The default is
// max-sum-throughput; package themis provides finish-time fairness.
type Allocator interface {
	Allocate(ctx context.Context, r *Round) ([][]float64, error)
}

// Options select the Gavel policy's objective. A nil *Options is the
// max-sum-throughput policy of the paper's Gavel baseline.
type Options struct {
	// Name is the policy's name in reports ("" = "gavel").
	Name string
	// Allocator replaces the max-sum-throughput LP (nil = that LP). Gavel's
	// priorities, stickiness and worker assignment stay the same.
	Allocator Allocator
}

// Policy is the Gavel baseline. It keeps time credits and worker assignments
// across rounds; use one Policy per simulated workload.
type Policy struct {
	// Solver solves each round's time-share LP; nil means Simplex.
	Solver LPSolver

	truth sim.Truth
	round float64
	name  string
	alloc Allocator

	types     []string
	capacity  map[string]int
	gpn       map[string]int
	maxGPUs   map[string]int
	offset    map[string]int // first global worker id of a type
	jobTime   map[string]map[string]float64
	clusterT  map[string]float64
	seen      map[string]bool
	prevWork  map[string][]int // global worker ids of last round
	prevType  map[string]string
	xputCache map[string]map[string]float64
}

// New returns a Gavel policy for a cluster and ground truth with round length
// round seconds (the paper uses 360).
func New(c sim.Cluster, truth sim.Truth, round float64) *Policy {
	return NewWithOptions(c, truth, round, nil)
}

// NewWithOptions returns a Gavel-family policy: Gavel's round mechanics
// with the objective of opt (nil = max-sum-throughput, as New).
func NewWithOptions(c sim.Cluster, truth sim.Truth, round float64, opt *Options) *Policy {
	p := &Policy{truth: truth, round: round, name: "gavel", capacity: map[string]int{}, gpn: map[string]int{}, maxGPUs: map[string]int{},
		offset: map[string]int{}, jobTime: map[string]map[string]float64{}, clusterT: map[string]float64{},
		seen: map[string]bool{}, prevWork: map[string][]int{}, prevType: map[string]string{}, xputCache: map[string]map[string]float64{}}
	off := 0
	for _, g := range c.Groups {
		p.types = append(p.types, g.Type)
		p.capacity[g.Type] = g.Nodes * g.GPUsPerNode
		p.gpn[g.Type] = g.GPUsPerNode
		p.offset[g.Type] = off
		off += g.Nodes * g.GPUsPerNode
		// Largest valid configuration (artifact CONFIGS_4GPU / CONFIGS_8GPU):
		// whole nodes, at most 64 GPUs.
		p.maxGPUs[g.Type] = min(g.Nodes*g.GPUsPerNode, max(64/g.GPUsPerNode, 1)*g.GPUsPerNode)
		if g.Nodes == 1 {
			p.maxGPUs[g.Type] = g.GPUsPerNode
		}
	}
	if opt != nil {
		if opt.Name != "" {
			p.name = opt.Name
		}
		p.alloc = opt.Allocator
	}
	return p
}

// Name implements sim.Policy.
func (p *Policy) Name() string { return p.name }

// Throughput returns Gavel's estimate of job's optimizer steps per second on
// type typ at its requested GPU count and batch size, on packed nodes (0.1 if
// the type is too small, as in the artifact).
func (p *Policy) Throughput(j *sim.Job, typ string) float64 {
	if m := p.xputCache[j.Spec.Name]; m != nil {
		if v, ok := m[typ]; ok {
			return v
		}
	}
	v := p.throughput(j, typ)
	if p.xputCache[j.Spec.Name] == nil {
		p.xputCache[j.Spec.Name] = map[string]float64{}
	}
	p.xputCache[j.Spec.Name][typ] = v
	return v
}

func (p *Policy) throughput(j *sim.Job, typ string) float64 {
	sf := j.Spec.Replicas
	if sf > p.maxGPUs[typ] || !p.truth.Supports(j.Spec.App, typ) {
		return 0.1
	}
	gpn := p.gpn[typ]
	var shape []int
	for s := 0; s < sf; {
		k := min(gpn, sf-s)
		shape = append(shape, k)
		s += k
	}
	B := j.Spec.Batch
	local := (B + sf - 1) / sf
	maxLocal := max(p.truth.PlacementMaxLocal(j.Spec.App, typ, shape), 1)
	accum := (local+maxLocal-1)/maxLocal - 1
	if sf == 1 {
		accum = max(accum, 1)
	}
	atomic := (local + accum) / (accum + 1)
	if c := j.App.MaxBatch / (sf * (accum + 1)); atomic > c {
		atomic = c
	}
	atomic = max(atomic, 1)
	step, sync, ok := p.truth.StepTime(j.Spec.App, typ, shape, atomic)
	if !ok || !(step > 0) {
		return 0.1
	}
	return 1 / (step + (step-sync)*float64(accum)) / j.App.Slowdown
}

// Schedule implements sim.Policy.
func (p *Policy) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	if p.truth == nil {
		return nil, &sim.InputError{Field: "Truth", Reason: "no ground truth (the policy was built with a nil sim.Truth)"}
	}
	jobs := s.Jobs
	for _, j := range jobs {
		if p.seen[j.Spec.Name] {
			continue
		}
		p.seen[j.Spec.Name] = true
		p.jobTime[j.Spec.Name] = map[string]float64{}
		for _, c := range p.types {
			p.jobTime[j.Spec.Name][c] = p.round / 2
			p.clusterT[c] += p.round / 2
		}
	}
	if len(jobs) == 0 {
		return map[string]sim.Alloc{}, nil
	}
	T := make([][]float64, len(jobs))
	for i, j := range jobs {
		T[i] = make([]float64, len(p.types))
		for c, typ := range p.types {
			T[i][c] = p.Throughput(j, typ)
		}
	}
	X, err := p.allocate(ctx, s, jobs, T)
	if err != nil {
		return nil, err
	}
	type entry struct {
		job, typ int
		prio, x  float64
	}
	var queue []entry
	for c, typ := range p.types {
		for i, j := range jobs {
			x := X[i][c]
			prio := 0.0
			if x != 0 {
				f := p.jobTime[j.Spec.Name][typ] / p.clusterT[typ]
				prio = x / f
			}
			queue = append(queue, entry{i, c, prio, x})
		}
	}
	sort.SliceStable(queue, func(a, b int) bool {
		if queue[a].prio != queue[b].prio {
			return queue[a].prio > queue[b].prio
		}
		return queue[a].x > queue[b].x
	})
	left := map[string]int{}
	for _, typ := range p.types {
		left[typ] = p.capacity[typ]
	}
	done := make([]bool, len(jobs))
	type sched struct{ job, sf int }
	perType := map[string][]sched{}
	for _, e := range queue {
		typ := p.types[e.typ]
		sf := jobs[e.job].Spec.Replicas
		if left[typ] == 0 || done[e.job] || sf > left[typ] {
			continue
		}
		left[typ] -= sf
		done[e.job] = true
		perType[typ] = append(perType[typ], sched{e.job, sf})
	}
	out := map[string]sim.Alloc{}
	newWork := map[string][]int{}
	newType := map[string]string{}
	for _, typ := range p.types {
		list := perType[typ]
		sort.SliceStable(list, func(a, b int) bool { return list[a].sf > list[b].sf })
		gpn := p.gpn[typ]
		nServers := p.capacity[typ] / gpn
		servers := make([][]int, nServers)
		for sv := range servers {
			for k := 0; k < gpn; k++ {
				servers[sv] = append(servers[sv], p.offset[typ]+sv*gpn+k)
			}
		}
		assigned := map[int]bool{}
		ptr := 0
		var sfs []int
		for _, e := range list {
			if len(sfs) == 0 || sfs[len(sfs)-1] != e.sf {
				sfs = append(sfs, e.sf)
			}
		}
		for _, sf := range sfs {
			for _, e := range list {
				if e.sf != sf {
					continue
				}
				name := jobs[e.job].Spec.Name
				if p.prevType[name] != typ {
					continue
				}
				prev := p.prevWork[name]
				ok := len(prev) == sf
				for _, w := range prev {
					if assigned[w] {
						ok = false
						break
					}
				}
				if ok {
					newWork[name] = prev
					for _, w := range prev {
						assigned[w] = true
					}
				}
			}
			for _, e := range list {
				if e.sf != sf {
					continue
				}
				name := jobs[e.job].Spec.Name
				if _, ok := newWork[name]; ok {
					continue
				}
				var ws []int
				for len(ws) < sf && ptr < len(servers) {
					if len(servers[ptr]) == 0 {
						ptr++
						continue
					}
					w := servers[ptr][0]
					if !assigned[w] {
						ws = append(ws, w)
						assigned[w] = true
					}
					servers[ptr] = servers[ptr][1:]
				}
				if len(ws) != sf {
					return nil, fmt.Errorf("gavel: could not assign %d workers of %s to job %q", sf, typ, name)
				}
				newWork[name] = ws
			}
		}
		for _, e := range list {
			name := jobs[e.job].Spec.Name
			newType[name] = typ
			ws := newWork[name]
			nodes := make([]int, len(ws))
			for k, w := range ws {
				nodes[k] = (w - p.offset[typ]) / gpn
			}
			out[name] = sim.Alloc{Type: typ, Nodes: nodes}
			p.jobTime[name][typ] += p.round
			p.clusterT[typ] += p.round
		}
	}
	p.prevWork, p.prevType = newWork, newType
	return out, ctx.Err()
}

// LPSolver solves Gavel's time-share LP: maximise Σ T[i][c]·X[i][c] subject
// to Σ_i replicas[i]·X[i][c] ≤ capacity[c] for every type c, Σ_c X[i][c] ≤ 1
// for every job i, and X ≥ 0. It returns an optimal X (jobs × types).
type LPSolver func(T [][]float64, replicas, capacity []int) ([][]float64, error)

// Simplex is the default LPSolver: gonum's dense simplex. It is exact but its
// cost grows with the square of the number of jobs per iteration, which
// dominates rounds with more than about a thousand active jobs; builds with
// the clp tag also have CLP.
func Simplex(T [][]float64, replicas, capacity []int) ([][]float64, error) {
	J, C := len(T), len(capacity)
	nv := J*C + C + J
	rows := C + J
	A := mat.NewDense(rows, nv, nil)
	b := make([]float64, rows)
	cost := make([]float64, nv)
	for i := range T {
		for c := range capacity {
			v := i*C + c
			cost[v] = -T[i][c]
			A.Set(c, v, float64(replicas[i]))
			A.Set(C+i, v, 1)
		}
	}
	basic := make([]int, rows)
	for c := range capacity {
		A.Set(c, J*C+c, 1)
		b[c] = float64(capacity[c])
		basic[c] = J*C + c
	}
	for i := 0; i < J; i++ {
		A.Set(C+i, J*C+C+i, 1)
		b[C+i] = 1
		basic[C+i] = J*C + C + i
	}
	_, x, err := lp.Simplex(cost, A, b, 1e-10, basic)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLP, err)
	}
	X := make([][]float64, J)
	for i := range X {
		X[i] = make([]float64, C)
		for c := 0; c < C; c++ {
			X[i][c] = x[i*C+c]
		}
	}
	return X, nil
}

// allocate returns the round's time shares: the Allocator's, checked
// against Gavel's base constraints, or the max-sum-throughput LP's.
func (p *Policy) allocate(ctx context.Context, s *sim.State, jobs []*sim.Job, T [][]float64) ([][]float64, error) {
	if p.alloc == nil {
		return p.solve(jobs, T)
	}
	r := &Round{Now: s.Now, Length: p.round, Types: p.types, Jobs: jobs, T: T}
	for _, typ := range p.types {
		r.Capacity = append(r.Capacity, p.capacity[typ])
	}
	X, err := p.alloc.Allocate(ctx, r)
	if err != nil {
		return nil, err
	}
	if len(X) != len(jobs) {
		return nil, fmt.Errorf("%w: allocator returned %d rows for %d jobs", ErrLP, len(X), len(jobs))
	}
	for i, row := range X {
		if len(row) != len(p.types) {
			return nil, fmt.Errorf("%w: allocator returned %d shares for job %q, want one per type (%d)", ErrLP, len(row), jobs[i].Spec.Name, len(p.types))
		}
		for c, v := range row {
			if math.IsNaN(v) {
				return nil, fmt.Errorf("%w: allocator returned NaN for job %q on %s", ErrLP, jobs[i].Spec.Name, p.types[c])
			}
			row[c] = math.Min(1, math.Max(0, math.Round(v*1e5)/1e5))
		}
	}
	return X, nil
}

// Steps returns Gavel's step counts of a job at its requested batch size:
// the optimizer steps done so far and in all (completion after the last
// epoch), from the ground truth's iteration counts, interpolated within the
// current epoch by progress.
func Steps(truth sim.Truth, j *sim.Job) (cur, total float64) {
	B := float64(j.Spec.Batch)
	app := j.Spec.App
	total = truth.Iterations(app, B, j.App.MaxEpochs-1)
	e := j.Epoch()
	before := 0.0
	if e > 0 {
		before = truth.Iterations(app, B, e-1)
	}
	after := truth.Iterations(app, B, e)
	p0, p1 := truth.Progress(app, e), truth.Progress(app, e+1)
	cur = before
	if p1 > p0 {
		cur += (after - before) * math.Min(1, math.Max(0, (j.Progress()-p0)/(p1-p0)))
	}
	return math.Min(cur, total), total
}

// solve returns the max-sum-throughput time shares, rounded to 5 decimals.
// Jobs with identical throughput rows and GPU counts get identical shares
// (the average of theirs), as an interior-point solver would give them.
func (p *Policy) solve(jobs []*sim.Job, T [][]float64) ([][]float64, error) {
	replicas := make([]int, len(jobs))
	for i, j := range jobs {
		replicas[i] = j.Spec.Replicas
	}
	capacity := make([]int, len(p.types))
	for c, typ := range p.types {
		capacity[c] = p.capacity[typ]
	}
	solver := p.Solver
	if solver == nil {
		solver = Simplex
	}
	X, err := solver(T, replicas, capacity)
	if err != nil {
		return nil, err
	}
	C := len(p.types)
	// Symmetrise identical jobs.
	groups := map[string][]int{}
	var keys []string
	for i, j := range jobs {
		k := fmt.Sprint(j.Spec.Replicas, T[i])
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		for c := 0; c < C; c++ {
			s := 0.0
			for _, i := range g {
				s += X[i][c]
			}
			for _, i := range g {
				X[i][c] = s / float64(len(g))
			}
		}
	}
	for i := range X {
		for c := range X[i] {
			v := math.Round(X[i][c]*1e5) / 1e5
			X[i][c] = math.Min(1, math.Max(0, v))
		}
	}
	return X, nil
}
