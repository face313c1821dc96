// Package shockwave is the Shockwave baseline of the simulator (Shockwave,
// NSDI '23), as the published Sia artifact formulates it and the Sia paper
// compares against it (§5.1, Table 4 and Figure 8): a heterogeneity-unaware
// look-ahead planner for rigid jobs at the workload's requested GPU count
// and batch size (Gavel's TunedJobs, Gavel, OSDI '20).
//
// Every round it plans the next R = 5 rounds on one virtual GPU type of the
// cluster's size (each job's iteration time is the mean over the real types
// of Gavel's prediction): binary s[j,r] with Σ_j GPUs_j·s[j,r] ≤ GPUs,
// planned progress p_j·iter_j ≤ L·Σ_r s[j,r], and the objective
//
//	maximise (1/(J·R)) Σ_j log((cur_j + p_j)/total_j) − k·max_j rem_j,
//
// with the log piecewise linear over the progress fractions 0, .2, ..., 1
// (log 0 taken as log 1e-6), rem_j the remaining time not covered by the
// plan, and the finish-time-fairness constraints
// L·(round + R) − submit_j + rem_j/share ≤ ρ_max·FT_j, where share =
// min(1, GPUs/J) and FT_j is the momentum-0.9 average of the job's estimated
// finish times (round·L − submit_j + remaining_j)/share, one per round: 0.9 ×
// the mean of the earlier estimates plus 0.1 × the newest. When those
// constraints cannot hold, they are dropped and the utility of each job
// whose projected ratio exceeds ρ_max is multiplied by ratio^λ (ratio^100
// when it could finish within a round; the projected ratio is the estimate
// now over FT_j); the rounds of the plan are then re-ranked by a second
// MILP (Rank, exact) that minimises Σ_j weight_j × the mean index of j's
// rounds, so that jobs of higher weight run earlier. The first round of the plan runs; GPUs it leaves free go to the other jobs in
// descending remaining time. Constants: R = 5, k = 1e-9, λ = 12, ρ_max = 1.
//
// The MILP is solved by Solve (pure Go, see there for why its structure
// allows an exact branch and bound over the planned round counts instead of
// a general MILP solver). Jobs are placed on virtual 4-GPU nodes and the
// placement is repaired per real GPU type as in Pollux's rigid variant: the
// type holding most of a job's GPUs, jobs repacked in descending size onto
// that type's emptiest virtual nodes (a job gets nothing when its type is
// full).
package shockwave

import (
	"context"
	"errors"
	"math"
	"sort"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
)

// Options tune the Shockwave baseline. A nil *Options gives the published
// settings.
type Options struct {
	// Rounds is the planning horizon R (0 = 5).
	Rounds int
	// K weighs the makespan term (0 = 1e-9; negative = none).
	K float64
	// Lambda is the fallback's reweighting exponent (0 = 12).
	Lambda float64
	// RhoMax is the finish-time-fairness target (0 = 1).
	RhoMax float64
	// Plan tunes the MILP search (nil = gap 1e-3, as the published
	// settings' MIP gap).
	Plan *PlanOptions
}

// DefaultRound is the round length in seconds of the simulator driver that
// runs Shockwave in the published artifact (its unaware driver's default).
const DefaultRound = 60

// Policy is the Shockwave baseline; use one per simulated workload.
type Policy struct {
	opt   Options
	truth sim.Truth
	gv    *gavel.Policy
	types []string
	gpus  int
	// capacity is each type's GPUs.
	capacity map[string]int
	vsize    int
	// vnodes are the virtual nodes in cluster order.
	vnodes []vnode
	ft     map[string]*ftSeries
	// Stats counts the rounds planned, those that fell back, and those
	// whose plan was not proven within the gap.
	Stats Stats
}

// Stats are Shockwave's per-run counters: rounds planned, rounds that fell
// back from the fairness constraints, plans not proven within the gap, and
// re-rankings stopped at their node limit.
type Stats struct {
	Plans, Fallbacks, NotOptimal, RankNotOptimal int
}

type vnode struct {
	typ  string
	node int
}

// New returns a Shockwave policy for a cluster and ground truth.
func New(c sim.Cluster, truth sim.Truth, opt *Options) *Policy {
	p := &Policy{truth: truth, gv: gavel.New(c, truth, DefaultRound), ft: map[string]*ftSeries{}, capacity: map[string]int{}}
	if opt != nil {
		p.opt = *opt
	}
	if p.opt.Rounds <= 0 {
		p.opt.Rounds = 5
	}
	if p.opt.K == 0 {
		p.opt.K = 1e-9
	}
	p.opt.K = math.Max(p.opt.K, 0)
	if p.opt.Lambda == 0 {
		p.opt.Lambda = 12
	}
	if p.opt.RhoMax == 0 {
		p.opt.RhoMax = 1
	}
	p.vsize = 4
	for _, g := range c.Groups {
		p.vsize = gcd(p.vsize, g.GPUsPerNode)
	}
	for _, g := range c.Groups {
		p.types = append(p.types, g.Type)
		p.gpus += g.Nodes * g.GPUsPerNode
		p.capacity[g.Type] += g.Nodes * g.GPUsPerNode
		for k := 0; k < g.Nodes; k++ {
			for v := 0; v < g.GPUsPerNode/p.vsize; v++ {
				p.vnodes = append(p.vnodes, vnode{g.Type, k})
			}
		}
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
func (p *Policy) Name() string { return "shockwave" }

// maxWeight caps the fallback's weights (ratio^100 overflows quickly); a
// job at the cap still dominates every job of weight 1.
const maxWeight = 1e12

// Schedule implements sim.Policy.
func (p *Policy) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	if p.truth == nil {
		return nil, &sim.InputError{Field: "Truth", Reason: "no ground truth (the policy was built with a nil sim.Truth)"}
	}
	out := map[string]sim.Alloc{}
	if len(s.Jobs) == 0 {
		return out, nil
	}
	prob, jobs, submit := p.problem(s)
	if len(jobs) == 0 {
		return out, nil
	}
	plan, err := Solve(ctx, prob, p.opt.Plan)
	p.Stats.Plans++
	var prio []float64
	if errors.Is(err, ErrInfeasible) {
		p.Stats.Fallbacks++
		prio = p.reweight(s, jobs, prob, submit)
		plan, err = Solve(ctx, prob, p.opt.Plan)
	}
	if err != nil {
		return nil, err
	}
	if !plan.Optimal {
		p.Stats.NotOptimal++
	}
	// Only the first round runs (the plan is re-solved every round). In the
	// fallback the rounds are re-ranked first by the second MILP.
	var first []int
	if prio != nil {
		rk, err := Rank(ctx, prob, plan.N, prio, p.opt.Plan)
		if err != nil {
			return nil, err
		}
		if !rk.Optimal {
			p.Stats.RankNotOptimal++
		}
		first = rk.Schedule[0]
	} else {
		first = newPacker(prob, prob.Rounds).schedule(plan.N, nil, 1)[0]
	}
	run := p.topUp(prob, first)
	return p.place(jobs, prob, run), ctx.Err()
}

// problem builds the round's planning problem over the jobs some real type
// can hold (returned in the problem's order) and updates their finish-time
// estimates. A job larger than every type that supports it fits the
// virtual type but can never be placed: planning it would only take GPUs
// from the others.
func (p *Policy) problem(s *sim.State) (*Problem, []*sim.Job, []float64) {
	L := s.Round
	R := p.opt.Rounds
	var jobs []*sim.Job
	for _, j := range s.Jobs {
		if p.holds(j) {
			jobs = append(jobs, j)
		}
	}
	J := len(jobs)
	share := math.Min(1, float64(p.gpus)/float64(J))
	ptr := math.Round(s.Now / L)
	prob := &Problem{Rounds: R, GPUs: p.gpus, Round: L, K: p.opt.K}
	submit := make([]float64, J)
	for i, j := range jobs {
		cur, total := gavel.Steps(p.truth, j)
		total = math.Max(total, 1)
		iter := p.iterTime(j)
		pj := PlanJob{GPUs: max(j.Spec.Replicas, 1), Cur: math.Min(cur, total), Total: total, IterTime: iter, Weight: 1}
		rem := math.Max(1, total-cur) * iter
		est := (ptr*L - j.Spec.Submit + rem) / share
		fs, ok := p.ft[j.Spec.Name]
		if !ok {
			fs = &ftSeries{}
			p.ft[j.Spec.Name] = fs
		}
		fs.add(ptr, est)
		ft := fs.average()
		pj.MaxRemaining = share * (p.opt.RhoMax*ft - L*(ptr+float64(R)) + j.Spec.Submit)
		prob.Jobs = append(prob.Jobs, pj)
		submit[i] = j.Spec.Submit
	}
	return prob, jobs, submit
}

// holds reports whether some type that supports job j has its requested
// GPUs.
func (p *Policy) holds(j *sim.Job) bool {
	for _, t := range p.types {
		if p.truth.Supports(j.Spec.App, t) && max(j.Spec.Replicas, 1) <= p.capacity[t] {
			return true
		}
	}
	return false
}

// ftSeries is a job's series of finish-time estimates, one per planning
// round, kept as the sums its momentum average needs.
type ftSeries struct {
	// sum is Σ_i est_i·(round_{i+1} − round_i) over the estimates before
	// the latest; span is Σ_i (round_{i+1} − round_i).
	sum, span float64
	// last and lastRound are the latest estimate and its round.
	last, lastRound float64
	n               int
}

// add appends the estimate of a round.
func (f *ftSeries) add(round, est float64) {
	if f.n > 0 {
		w := round - f.lastRound
		f.sum += f.last * w
		f.span += w
	}
	f.last, f.lastRound = est, round
	f.n++
}

// momentum weighs the newest estimate against the earlier ones' average.
const momentum = 0.9

// average is Shockwave's momentum-0.9 running average of the finish-time
// estimates: 0.9 × the mean of the earlier estimates, each weighted by the
// rounds until the next one, plus 0.1 × the newest (the newest alone when
// it is the only one). Unlike an exponential average, it keeps the whole
// history: a job that waited early carries the lower early estimates
// until it finishes.
func (f *ftSeries) average() float64 {
	if f.span <= 0 {
		return f.last
	}
	return momentum*f.sum/f.span + (1-momentum)*f.last
}

// iterTime is the job's mean predicted seconds per step over the real types
// it fits (Gavel's throughput model at its requested size).
func (p *Policy) iterTime(j *sim.Job) float64 {
	sum, n := 0.0, 0
	for _, typ := range p.types {
		if !p.truth.Supports(j.Spec.App, typ) {
			continue
		}
		if t := p.gv.Throughput(j, typ); t > 0.1 {
			sum += 1 / t
			n++
		}
	}
	if n == 0 {
		return 10 // Gavel's placeholder throughput of 0.1 steps/s
	}
	return sum / float64(n)
}

// reweight drops the fairness constraints and weighs the utility of jobs
// whose projected ratio exceeds ρ_max; it returns the weights as the
// re-ranking priorities. The projected ratio is the job's finish-time
// estimate now, round·L − submit_j + remaining_j/share (no plan: the
// constraints' L·(round + R) and planned time do not enter), over FT_j; the
// exponent is λ, or 100 when the remaining time is under one round.
func (p *Policy) reweight(s *sim.State, jobs []*sim.Job, prob *Problem, submit []float64) []float64 {
	L := s.Round
	share := math.Min(1, float64(p.gpus)/float64(len(prob.Jobs)))
	ptr := math.Round(s.Now / L)
	prio := make([]float64, len(prob.Jobs))
	for i := range prob.Jobs {
		j := &prob.Jobs[i]
		ft := p.ft[jobs[i].Spec.Name].average()
		rem := j.Remaining()
		ratio := projectedRatio(L*ptr, submit[i], rem, share, ft)
		w := 1.0
		if ratio > p.opt.RhoMax {
			e := p.opt.Lambda
			if rem < L {
				e = 100
			}
			w = math.Min(maxWeight, math.Pow(ratio, e))
		}
		j.Weight = w
		j.MaxRemaining = math.Inf(1)
		prio[i] = w
	}
	return prio
}

// projectedRatio is the fallback's finish-time ratio of a job at time now:
// (now − submit + rem/share) / ft.
func projectedRatio(now, submit, rem, share, ft float64) float64 {
	return (now - submit + rem/share) / math.Max(ft, 1e-9)
}

// topUp adds to the first round's jobs the others that fit, in descending
// remaining time.
func (p *Policy) topUp(prob *Problem, first []int) []int {
	in := make([]bool, len(prob.Jobs))
	free := prob.GPUs
	for _, j := range first {
		in[j] = true
		free -= prob.Jobs[j].GPUs
	}
	var rest []int
	for j := range prob.Jobs {
		if !in[j] {
			rest = append(rest, j)
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return prob.Jobs[rest[a]].Remaining() > prob.Jobs[rest[b]].Remaining() })
	run := append([]int(nil), first...)
	for _, j := range rest {
		if g := prob.Jobs[j].GPUs; g <= free {
			run = append(run, j)
			free -= g
		}
	}
	return run
}

// place puts the running jobs on virtual nodes (descending size, first
// fit), then repairs each job to one real type: the type with most of its
// GPUs (ties to the first), repacked per type in descending size onto the
// virtual nodes with most free GPUs.
func (p *Policy) place(jobs []*sim.Job, prob *Problem, run []int) map[string]sim.Alloc {
	sort.SliceStable(run, func(a, b int) bool { return prob.Jobs[run[a]].GPUs > prob.Jobs[run[b]].GPUs })
	free := make([]int, len(p.vnodes))
	for v := range free {
		free[v] = p.vsize
	}
	primary := map[int]string{}
	v := 0
	for _, j := range run {
		count := map[string]int{}
		var order []string
		for g := prob.Jobs[j].GPUs; g > 0 && v < len(free); {
			k := min(g, free[v])
			if k > 0 {
				t := p.vnodes[v].typ
				if count[t] == 0 {
					order = append(order, t)
				}
				count[t] += k
				free[v] -= k
				g -= k
			}
			if free[v] == 0 {
				v++
			}
		}
		best := ""
		for _, t := range order {
			if best == "" || count[t] > count[best] {
				best = t
			}
		}
		primary[j] = best
	}
	for v := range free {
		free[v] = p.vsize
	}
	out := map[string]sim.Alloc{}
	for _, typ := range p.types {
		for _, j := range run {
			if primary[j] != typ || !p.truth.Supports(jobs[j].Spec.App, typ) {
				continue
			}
			g := prob.Jobs[j].GPUs
			avail := 0
			for v, vn := range p.vnodes {
				if vn.typ == typ {
					avail += free[v]
				}
			}
			if avail < g {
				continue
			}
			var nodes []int
			for g > 0 {
				bv := -1
				for v, vn := range p.vnodes {
					if vn.typ == typ && free[v] > 0 && (bv < 0 || free[v] > free[bv]) {
						bv = v
					}
				}
				k := min(g, free[bv])
				free[bv] -= k
				g -= k
				for ; k > 0; k-- {
					nodes = append(nodes, p.vnodes[bv].node)
				}
			}
			sort.Ints(nodes)
			out[jobs[j].Spec.Name] = sim.Alloc{Type: typ, Nodes: nodes}
		}
	}
	return out
}
