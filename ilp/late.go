package ilp

import (
	"math"
)

// This file holds what Solve does when its deadline leaves no time for the
// whole input: the plan of a solve whose validation was cut short, and the
// admission of the jobs a model cut short does not hold.

// fallback is the Solution of a solve whose deadline passed before p was
// validated (sc.checked < len(p.Jobs)): the pins, the warm start where it
// fits, and queued jobs admitted greedily on the capacity left until the
// clock's greedyEnd (validating each job's options as it is considered).
// Its Bound is infinite: nothing is known of the options not read.
func fallback(p *Problem, warm []int, sc scan, clk *clock) (Solution, error) {
	assign := make([]int, len(p.Jobs))
	for i, j := range p.Jobs {
		assign[i] = j.Pin
	}
	if _, err := admitLate(p, assign, 0, warm, sc.checked, clk, nil); err != nil {
		return unsolved, err
	}
	trace("fallback.admit")
	bound := math.Inf(1)
	if p.Sense == Minimize {
		bound = math.Inf(-1)
	}
	return Solution{Status: Feasible, Assignment: assign, Objective: p.Objective(assign), Bound: bound}, nil
}

// admitLate completes assign, a feasible assignment, for the free jobs from
// index from on that it leaves unallocated: first each one's warm-start
// option (warm, one entry per job, else ignored) where it is better than
// staying unallocated and fits what assign leaves, in job order (all at
// once when they fit together: see admitWarm); then, until the clock's
// greedyEnd (no limit with a nil clock), each remaining job's most
// profitable option that fits, in job order. Options of jobs from checked
// on have not been validated: each job's are before it is considered, and
// the first invalid one is returned as the error. It returns the profit
// (±(Value − Unallocated)) the admitted jobs add. rows, when non-nil, is
// the model's rows and the capacity assign leaves on each (nil: computed
// here).
func admitLate(p *Problem, assign []int, from int, warm []int, checked int, clk *clock, rows *lateRows) (float64, error) {
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	if rows == nil {
		rows = newLateRows(p, assign)
	}
	trace("admit.setup")
	var budget lateBudget
	gain := 0.0
	if len(warm) == len(p.Jobs) {
		gain = admitWarm(p, assign, from, warm, clk, rows, &budget)
	}
	trace("admit.warm")
	if !rows.lists(p, clk) {
		// no time for the per-job lists of the listed quotas (millions
		// of entries): no option can be tested
		return gain, nil
	}
	// capacity short of the free jobs' demand: each job takes its
	// option of most profit per GPU, and the GPUs left then go to larger
	// options (upgradeLate); each job's most profitable option otherwise
	// (on 5,000 identical jobs over 7,503 GPUs, 476 jobs ran on 16 GPUs
	// each while the others waited: an objective of −757 against 12,074).
	// When the pass is cut short by the clock after admitting jobs, the
	// jobs it did not reach may take the GPUs left in the next round: no
	// job steps up (see noStepUps).
	short := shortOfCapacity(p, assign, from, checked, sign, rows)
	better := byValue
	var admitted []int32 // (short) the jobs admitted, for upgradeLate
	cut := false         // the pass ended before the last job
	if short {
		better = perGPU
	}
	take := func(i, k int) float64 {
		o := p.Jobs[i].Options[k]
		rows.take(p, i, o)
		assign[i] = k
		return sign * (o.Value - p.Jobs[i].Unallocated)
	}
	for i := from; i < len(p.Jobs); i++ {
		j := &p.Jobs[i]
		// the jobs already placed (pinned, or kept by the warm start) and
		// those with nothing to offer cost nothing and count toward no
		// budget: a round out of time considers its first greedyMinJobs
		// jobs that may be admitted, wherever they stand among the others
		if j.Pin >= 0 || assign[i] >= 0 || len(j.Options) == 0 {
			continue
		}
		if budget.job(clk) {
			cut = true
			break
		}
		bk, bp, stop := -1, 0.0, false
		for k, o := range j.Options {
			if i >= checked {
				if err := p.optionError(i, k); err != nil {
					return gain, err
				}
			}
			work := 1
			pr := sign * (o.Value - j.Unallocated)
			if pr > 0 && (bk < 0 || better(pr, o.GPUs, bp, j.Options[bk].GPUs)) {
				ok, w := rows.fits(p, i, o)
				if ok {
					bk, bp = k, pr
				}
				work += w
			}
			// out of time within a job (of 10^5 options, or under
			// thousands of quotas): the best option tested so far
			if stop = budget.spend(clk, work); stop {
				break
			}
		}
		if bk >= 0 {
			gain += take(i, bk)
			if short {
				admitted = append(admitted, int32(i))
			}
		}
		if stop {
			cut = true
			break
		}
	}
	trace("admit.greedy")
	if short && !noStepUps(cut, len(admitted) > 0) {
		gain += upgradeLate(p, assign, admitted, sign, clk, rows, &budget)
		trace("admit.upgrade")
	}
	return gain, nil
}

// noStepUps reports whether a greedy admission that spreads short
// capacity leaves the GPUs it did not hand out to queued jobs instead of
// stepping up the jobs it admitted: when its pass over the queued jobs was
// cut short by the clock after admitting some. The jobs it did not reach
// are queued jobs the next warm-started round reaches first; a step up
// now takes GPUs that would start one of them, and warm-started rounds
// keep every allocation. On 5,000 identical jobs over 7,503 GPUs,
// warm-started 5 ms rounds (the build alone takes 3.6 ms on one core)
// admitted 64-128 jobs each and stepped them up: after 30 rounds 2,039
// jobs held every GPU (3.7 each) and the other 2,961 waited for good, at
// 52 % of a solve with time. A pass cut short that admitted nobody steps
// up: the jobs it reached do not fit, and no later round admits more.
func noStepUps(cut, admittedAny bool) bool { return cut && admittedAny }

// byValue and perGPU are admitLate's two rules for a job's option: the
// most profitable (ties: fewer GPUs), or the most profitable per GPU
// (ties: more profitable; an option of no GPUs first).
func byValue(pr float64, g int, bp float64, bg int) bool {
	return pr > bp || pr == bp && g < bg
}

func perGPU(pr float64, g int, bp float64, bg int) bool {
	switch {
	case g == 0 || bg == 0:
		return g == 0 && (bg != 0 || pr > bp)
	case pr*float64(bg) != bp*float64(g):
		return pr*float64(bg) > bp*float64(g)
	}
	return pr > bp
}

// lateSample is the number of jobs whose most profitable options
// shortOfCapacity reads to estimate the free jobs' demand.
const lateSample = 64

// lateSampleOptions bounds the options shortOfCapacity reads (with a job
// of 10^5 options, reading them all ran 2.4 ms past an expired deadline).
const lateSampleOptions = 1 << 11

// shortOfCapacity reports whether the free jobs from index from on that
// assign leaves unallocated would, each on its most profitable option,
// ask for more GPUs than the type rows have left: the first lateSample of
// them (of options validated so far: below checked, or checked here; an
// invalid one ends the sample, the admission returns its error) stand for
// all, their share of the unassigned jobs read for the share of free jobs
// among the unassigned (at most lateSampleOptions options read). The
// unassigned are counted on all of assign: a warm start keeps the first
// jobs (a share of every job read counted 454 free jobs of 4,360), and the
// jobs before from that the model left unallocated, out of time, come in
// in later rounds too (counting from from only, warm-started 5 ms rounds
// on 5,000 identical jobs saw 240-2,700 free jobs where 2,600-4,300
// waited, and gave 64 jobs 16 GPUs each in a round in three of four runs).
// All of them count, not only those this admission has time for:
// over warm-started rounds the others come in later (counting only the
// first greedyMinJobs, an expired solve on 5,000 identical jobs kept its
// 64 jobs on 16 GPUs each, and the rounds stopped at 448 such jobs). Its
// work is linear in the jobs and options it reads, a few hundred whatever
// the problem's size, and a pass over assign (an int per job: a few µs
// on 5,000 jobs).
func shortOfCapacity(p *Problem, assign []int, from, checked int, sign float64, rows *lateRows) bool {
	read, sampled, demand, opts := 0, 0, 0.0, 0
	for i := from; i < len(p.Jobs) && sampled < lateSample && read < 16*lateSample && opts < lateSampleOptions; i++ {
		if assign[i] >= 0 {
			continue // (pinned, or kept by the warm start)
		}
		j := &p.Jobs[i]
		read++
		if len(j.Options) == 0 {
			continue
		}
		bk, bp := -1, 0.0
		for k, o := range j.Options {
			if opts++; opts > lateSampleOptions {
				break // (a job of 10^5 options: its best so far)
			}
			if i >= checked && p.optionError(i, k) != nil {
				return false // (the admission reports it)
			}
			if pr := sign * (o.Value - j.Unallocated); pr > 0 && (bk < 0 || byValue(pr, o.GPUs, bp, j.Options[bk].GPUs)) {
				bk, bp = k, pr
			}
		}
		sampled++
		if bk >= 0 {
			demand += float64(j.Options[bk].GPUs)
		}
	}
	if sampled == 0 {
		return false
	}
	left := 0.0
	for r := range rows.nt {
		left += float64(max(0, rows.left[r]))
	}
	unassigned := 0
	for _, c := range assign {
		if c < 0 {
			unassigned++
		}
	}
	free := float64(sampled) / float64(read) * float64(unassigned)
	return demand/float64(sampled)*free > left
}

// stepSlope is the profit gained per GPU added by a step from an option of
// profit pc on gc GPUs to one of profit pr on g GPUs: +Inf for more profit
// on no more GPUs (the step up of upgradeLate and quickGreedy's spreading
// pass).
func stepSlope(pc float64, gc int, pr float64, g int) float64 {
	if g <= gc {
		return math.Inf(1)
	}
	return (pr - pc) / float64(g-gc)
}

// upgradeLate moves each job of admitted (in order, each on the option
// admitLate's per-GPU rule chose) one step up, while the budget lasts: to
// the option of most profit gained per GPU added that fits once its own
// is given back (more profit on no more GPUs first), and returns the
// profit the moves add. On capacity short of the demand the jobs first
// each take their option of most profit per GPU, so that as many as
// possible run, and then the GPUs left go where they add most per GPU:
// over warm-started rounds (each admitting the jobs it has time for) the
// capacity is spread as a concave objective's optimum spreads it, not
// given whole to the first jobs. Each move gains and fits: the assignment
// stays feasible and never loses profit.
func upgradeLate(p *Problem, assign []int, admitted []int32, sign float64, clk *clock, rows *lateRows, budget *lateBudget) float64 {
	gain := 0.0
	for _, i32 := range admitted {
		i := int(i32)
		j := &p.Jobs[i]
		if budget.job(clk) {
			break
		}
		cur := assign[i]
		co := j.Options[cur]
		rows.give(p, i, co)
		pc := sign * (co.Value - j.Unallocated)
		bk, bs, stop := cur, 0.0, false // bs: the best step's gain per GPU added
		for k, o := range j.Options {
			work := 1
			pr := sign * (o.Value - j.Unallocated)
			if slope := stepSlope(pc, co.GPUs, pr, o.GPUs); pr > pc && slope > bs {
				ok, w := rows.fits(p, i, o)
				if ok {
					bk, bs = k, slope
				}
				work += w
			}
			if stop = budget.spend(clk, work); stop {
				break
			}
		}
		rows.take(p, i, j.Options[bk])
		if bk != cur {
			assign[i] = bk
			gain += sign * (j.Options[bk].Value - co.Value)
		}
		if stop {
			break
		}
	}
	return gain
}

// admitWarm gives each free job from index from on that assign leaves
// unallocated its warm-start option where it is better than staying
// unallocated and fits, in job order, and returns the profit they add.
// When all those options fit together on what assign leaves (the warm
// start is feasible), they are kept at once: checking that is linear in
// the jobs and the quotas' entries (lateRows.usage), whatever the clock.
// Otherwise each is tested in turn until the clock's greedyEnd (budget).
func admitWarm(p *Problem, assign []int, from int, warm []int, clk *clock, rows *lateRows, budget *lateBudget) float64 {
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	keep := func(i int) int {
		j := &p.Jobs[i]
		k := warmOf(warm, i, len(j.Options))
		if i < from || j.Pin >= 0 || k < 0 || assign[i] >= 0 || !(sign*(j.Options[k].Value-j.Unallocated) > 0) {
			return -1
		}
		return k
	}
	used := rows.usage(p, len(p.Jobs), keep)
	all := true
	for r, u := range used {
		if u > rows.left[r] {
			all = false
			break
		}
	}
	gain := 0.0
	if !all && !rows.lists(p, clk) {
		return 0
	}
	if all {
		for i := from; i < len(p.Jobs); i++ {
			if k := keep(i); k >= 0 {
				assign[i] = k
				gain += sign * (p.Jobs[i].Options[k].Value - p.Jobs[i].Unallocated)
			}
		}
		for r, u := range used {
			rows.left[r] -= u
		}
		return gain
	}
	for i := from; i < len(p.Jobs); i++ {
		k := keep(i)
		if k < 0 {
			continue
		}
		o := p.Jobs[i].Options[k]
		ok, w := rows.fits(p, i, o)
		if ok {
			rows.take(p, i, o)
			assign[i] = k
			gain += sign * (o.Value - p.Jobs[i].Unallocated)
		}
		if budget.spend(clk, w) {
			break
		}
	}
	return gain
}
