package ilp

import (
	"cmp"
	"slices"
)

// Exchange moves: a local search that closes the last fraction of a
// percent between a greedy incumbent and the Lagrangian bound on large
// problems, where the knapsack programs cannot finish before a deadline.
//
// A move takes one job to a more profitable option (of any type, or from
// none) and, when the capacity left on the new option's type does not
// suffice, pays for it with "downs": other jobs of that type taking a
// smaller option of the same type, or none, cheapest per GPU freed first.
// It is made when the gain exceeds the downs' cost and every row (quotas
// included) still holds. The capacity a move frees elsewhere (the job's
// old type) is there for the next moves. Rounds of moves repeat until none
// improves the incumbent or the clock stops them; every move strictly
// improves the profit, so the search ends.

// down is a way for job k (position in free) to give back GPUs of its
// current option's type: option o (a smaller one of the type, or -1 for
// none), freeing d GPUs at a loss of cost.
type down struct {
	k, o int
	d    int
	cost float64
}

// upMove is a candidate move: job k (position in free) to option o, worth
// gain more than its current option, needing need GPUs of the option's type
// beyond what is left (0: none), with its estimated net gain.
type upMove struct {
	k, o int
	gain float64
	net  float64
}

// exchange improves choice (parallel to free; it must fit capv) in place
// by exchange moves and reports whether it improved it. It looks at the
// clock (tick) and stops, with the moves made so far, when the search must.
func (sr *search) exchange(free []int32, capv []int, choice []int) bool {
	m := sr.m
	left := append([]int(nil), capv...)
	for k, i := range free {
		if c := choice[k]; c >= 0 {
			apply(left, &m.jobs[i], c, 1)
		}
	}
	for _, l := range left {
		if l < 0 {
			return false // not a feasible start
		}
	}
	nt := len(m.types)
	downs := make([][]down, nt)
	touched := make([]bool, len(free))
	heads := make([]int, nt) // see makeMove
	// A round after the first looks again only at what its predecessor
	// changed: the jobs it moved (dirtyJob) and the type rows whose
	// capacity left or downs changed (dirtyType); every other move's
	// estimate is what it was, not positive or not made for reasons that
	// still hold.
	dirtyJob := make([]bool, len(free))
	dirtyType := make([]bool, nt)
	for k := range dirtyJob {
		dirtyJob[k] = true
	}
	for t := range dirtyType {
		dirtyType[t] = true
	}
	improved := false
	for {
		if !sr.downsOf(free, choice, downs, dirtyType) {
			return improved
		}
		moves, ok := sr.upMoves(free, choice, left, downs, dirtyJob, dirtyType)
		if !ok || len(moves) == 0 || !sr.clk.affords(sortCost(len(moves))) {
			return improved // (a sort of 5,000 moves: 0.5-1 ms, uninterruptible)
		}
		slices.SortFunc(moves, func(a, b upMove) int { return cmp.Or(cmp.Compare(b.net, a.net), a.k-b.k, a.o-b.o) })
		clear(touched)
		clear(heads)
		clear(dirtyType)
		made := 0
		for _, mv := range moves {
			if sr.clk.tick(512) {
				return improved || made > 0
			}
			if touched[mv.k] {
				continue
			}
			c := choice[mv.k]
			if sr.makeMove(free, choice, left, downs, heads, touched, mv) {
				made++
				j := &m.jobs[free[mv.k]]
				dirtyType[j.groups[j.opts[mv.o].grp].rows[0]] = true
				if c >= 0 {
					dirtyType[j.groups[j.opts[c].grp].rows[0]] = true
				}
			}
		}
		if made == 0 {
			return improved
		}
		copy(dirtyJob, touched)
		improved = true
	}
}

// downsOf sets downs[t], for the type rows t marked in dirty, to the downs
// of the jobs on t, cheapest per GPU freed first (ties: job, then option,
// in order). It reports false when the clock stops it.
func (sr *search) downsOf(free []int32, choice []int, downs [][]down, dirty []bool) bool {
	m := sr.m
	for t := range downs {
		if dirty[t] {
			downs[t] = downs[t][:0]
		}
	}
	for k, i := range free {
		c := choice[k]
		if c < 0 {
			continue
		}
		j := &m.jobs[i]
		oc := &j.opts[c]
		t := int(j.groups[oc.grp].rows[0])
		if !dirty[t] {
			continue
		}
		if sr.clk.tick(32 * len(j.opts)) {
			return false
		}
		downs[t] = append(downs[t], down{k: k, o: -1, d: oc.g, cost: oc.p})
		for oi := range j.opts {
			if o := &j.opts[oi]; o.g < oc.g && j.onType(oi, t) {
				downs[t] = append(downs[t], down{k: k, o: oi, d: oc.g - o.g, cost: oc.p - o.p})
			}
		}
	}
	for t := range downs {
		if !dirty[t] {
			continue
		}
		if sr.clk.tick(64*len(downs[t])) || !sr.clk.affords(sortCost(len(downs[t]))) {
			return false
		}
		slices.SortFunc(downs[t], func(a, b down) int {
			// a.cost/a.d < b.cost/b.d without dividing
			return cmp.Or(cmp.Compare(a.cost*float64(b.d), b.cost*float64(a.d)), a.k-b.k, a.o-b.o)
		})
	}
	return true
}

// upMoves lists the move of largest estimated net gain of every job that
// has one of positive net gain, among the moves of the jobs marked in
// dirtyJob and the moves onto the type rows marked in dirtyType. ok is false
// when the clock stops it.
func (sr *search) upMoves(free []int32, choice []int, left []int, downs [][]down, dirtyJob, dirtyType []bool) (moves []upMove, ok bool) {
	m := sr.m
	for k, i := range free {
		j := &m.jobs[i]
		if sr.clk.tick(128 * len(j.opts)) {
			return nil, false
		}
		c := choice[k]
		pc := 0.0
		if c >= 0 {
			pc = j.opts[c].p
		}
		bestNet := -1 // the job's best move, in moves
		for oi := range j.opts {
			o := &j.opts[oi]
			gain := o.p - pc
			if !(gain > sr.eqTol) {
				continue
			}
			t := int(j.groups[o.grp].rows[0])
			if !dirtyJob[k] && !dirtyType[t] {
				continue // as it was (see exchange)
			}
			avail := left[t]
			if c >= 0 && j.onType(c, t) {
				avail += j.opts[c].g
			}
			need := o.g - avail
			cost := 0.0
			if need > 0 {
				var enough bool
				cost, enough = fundCost(downs[t], k, need, gain)
				if !enough {
					continue
				}
			}
			if net := gain - cost; net > sr.eqTol && (bestNet < 0 || net > moves[bestNet].net) {
				if bestNet < 0 {
					bestNet = len(moves)
					moves = append(moves, upMove{})
				}
				moves[bestNet] = upMove{k: k, o: oi, gain: gain, net: net}
			}
		}
	}
	return moves, true
}

// fundCost is the cost of the cheapest downs (in the list's order, at
// most one per job, never job k's) that free need GPUs; enough is false
// when they cannot or when their cost reaches limit.
func fundCost(ds []down, k, need int, limit float64) (cost float64, enough bool) {
	var used [8]int // the jobs taken; more than 8 downs fund no move
	n := 0
	for _, d := range ds {
		if d.k == k || slices.Contains(used[:n], d.k) {
			continue
		}
		if n == len(used) {
			return cost, false
		}
		used[n] = d.k
		n++
		cost += d.cost
		if cost >= limit {
			return cost, false
		}
		if need -= d.d; need <= 0 {
			return cost, true
		}
	}
	return cost, false
}

// makeMove makes move mv if it still improves the profit against the
// current choice: it funds it with the current downs of jobs not touched
// in this round, checks every row, and applies it. It reports whether it
// made it.
func (sr *search) makeMove(free []int32, choice []int, left []int, downs [][]down, heads []int, touched []bool, mv upMove) bool {
	m := sr.m
	j := &m.jobs[free[mv.k]]
	c := choice[mv.k]
	o := &j.opts[mv.o]
	t := int(j.groups[o.grp].rows[0])
	pc := 0.0
	if c >= 0 {
		pc = j.opts[c].p
		apply(left, j, c, -1)
	}
	apply(left, j, mv.o, 1)
	gain := o.p - pc
	// fund the type row's shortfall
	var taken []down
	cost := 0.0
	// the downs of jobs touched in this round are skipped: those at the
	// front of the list for good (heads)
	ds := downs[t]
	for heads[t] < len(ds) && touched[ds[heads[t]].k] {
		heads[t]++
	}
	for x, d := range ds[heads[t]:] {
		if left[t] >= 0 || x%64 == 63 && sr.clk.tick(64*4) {
			break
		}
		if d.k == mv.k || touched[d.k] || slices.ContainsFunc(taken, func(x down) bool { return x.k == d.k }) {
			continue
		}
		if len(taken) == 8 {
			break
		}
		if cost+d.cost >= gain {
			break
		}
		kj := &m.jobs[free[d.k]]
		apply(left, kj, choice[d.k], -1)
		if d.o >= 0 {
			apply(left, kj, d.o, 1)
		}
		cost += d.cost
		taken = append(taken, d)
	}
	feasible := gain-cost > sr.eqTol
	for _, l := range left {
		if l < 0 {
			feasible = false
		}
	}
	if !feasible {
		// undo
		for x := len(taken) - 1; x >= 0; x-- {
			d := taken[x]
			kj := &m.jobs[free[d.k]]
			if d.o >= 0 {
				apply(left, kj, d.o, -1)
			}
			apply(left, kj, choice[d.k], 1)
		}
		apply(left, j, mv.o, -1)
		if c >= 0 {
			apply(left, j, c, 1)
		}
		return false
	}
	for _, d := range taken {
		choice[d.k] = d.o
		touched[d.k] = true
	}
	choice[mv.k] = mv.o
	touched[mv.k] = true
	return true
}
