package ilp

import "slices"

// marginalGreedy is a primal heuristic for the capacity-bound rounds in
// which the Lagrangian choices at lam over-demand some types: every free
// job is given the type of its Lagrangian choice (mjob.best; jobs whose choice is none
// wait), and each type's capacity is then handed out by marginal profit per
// GPU, one step up a job's upper concave hull of (GPUs, priced profit) over
// its options of the type at a time, best step first: the greedy that is
// optimal for one capacity and concave profits up to the last step. An
// option's priced profit is its profit less the multipliers of the quota
// rows it counts toward (not its type's, the same per GPU for every option
// of the chain): a job whose options fill a binding quota climbs them at
// their worth net of the quota, so that the quota goes to the jobs that
// gain most from it (the greedy without it left 5.0e-4 of the bound on
// the 5,000-job quota round of the hard corpus, 2.6e-4 with it, at the
// same multipliers). Options worth nothing net of their quotas are left
// out of the chain. Jobs left without an option then take, in job order,
// the option of least reduced cost that fits, and the capacity still left
// goes out by restOfCapacity. The result (parallel to free) fits every
// row.
//
// tight (the Newton path under a tight deadline) takes each job's
// Lagrangian choice by its hulls, faster; otherwise by every option, whose
// ties exact solves have always followed (see chains.add).
func (sr *search) marginalGreedy(free []int32, capv []int, lam []float64, tight bool) []int {
	m := sr.m
	choice := make([]int, len(free))
	left := append([]int(nil), capv...)
	ch := newChains(len(free))
	late := false
	for k, i := range free {
		choice[k] = -1
		// past greedyEnd, only the jobs chained so far climb (the others
		// go to the passes below, which stop too)
		if !late && k >= greedyMinJobs && k%64 == 0 {
			late = sr.greedyOver()
		}
		if late {
			ch.skip(k)
			continue
		}
		ch.add(m, k, &m.jobs[i], lam, tight)
	}
	ch.h.init()
	for len(ch.h) > 0 {
		// past the deadline the steps go on until greedyEnd, as the
		// essential greedy incumbent's (see clock): a round whose dual
		// ended late still gets the best steps of every type, not the
		// few made before the deadline (what is placed so far fits)
		if sr.clk.tick(64) && (sr.clk.greedyEnd.IsZero() || sr.greedyOver()) {
			break
		}
		k := ch.h.pop().k
		if at, ok := ch.climb(k, left); ok {
			choice[k] = int(ch.opt[at])
			if at+1 < ch.start[k+1] {
				ch.h.push(step{k: k, slope: (ch.pp[at+1] - ch.pp[at]) / float64(ch.g[at+1]-ch.g[at])})
			}
		}
	}
	// jobs still without an option: least reduced cost that fits (past
	// the greedy incumbents' time, see clock.greedyOver, the jobs seen so
	// far)
	var pace greedyPace // the clock, by the work of the pass (lateclock.go)
	pace.strict = sr.optional
	for k, i := range free {
		j := &m.jobs[i]
		if pace.over(sr.clk, j) {
			break
		}
		if choice[k] >= 0 {
			continue
		}
		hb, _ := j.best(lam)
		bo, brc := -1, 0.0
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := hb - (o.p - j.groups[o.grp].price(lam)*float64(o.g))
			if (bo < 0 || rc < brc) && sr.fits(left, j, oi) {
				bo, brc = oi, rc
			}
		}
		if bo >= 0 {
			choice[k] = bo
			apply(left, j, bo, 1)
		}
	}
	sr.restOfCapacity(free, left, choice, sr.optional)
	return choice
}

// climb moves job k one step up its chain when the capacity left allows
// it (from none, or from its current option, whose rows it gives back
// first) and reports the chain position it reached; it changes nothing
// when the step does not fit. It reads the chain's copies of the options'
// GPUs and rows only: the jobs' options and groups, scattered in memory,
// cost a cache miss each on thousands of jobs.
func (c *chains) climb(k int, left []int) (int32, bool) {
	at := c.start[k] + c.pos[k] + 1
	g, rows := int(c.g[at]), c.rows[at]
	if c.pos[k] >= 0 {
		cg, crows := int(c.g[at-1]), c.rows[at-1]
		if &crows[0] == &rows[0] && len(crows) == len(rows) {
			d := g - cg // same rows: only the GPUs added count
			for _, r := range rows {
				if d > left[r] {
					return 0, false
				}
			}
			for _, r := range rows {
				left[r] -= d
			}
			c.pos[k]++
			return at, true
		}
		for _, r := range crows {
			left[r] += cg
		}
		ok := true
		for _, r := range rows {
			ok = ok && g <= left[r]
		}
		if !ok {
			for _, r := range crows {
				left[r] -= cg
			}
			return 0, false
		}
	} else {
		for _, r := range rows {
			if g > left[r] {
				return 0, false
			}
		}
	}
	for _, r := range rows {
		left[r] -= g
	}
	c.pos[k]++
	return at, true
}

// chains are marginalGreedy's per-job hulls, flat: job k's chain is
// opt[start[k]:start[k+1]] (option indices, GPUs ascending) with the
// options' priced profits pp, GPUs g and rows, pos[k] its position
// reached (-1: none), and h the heap of every job's next step.
type chains struct {
	start []int32
	pos   []int32
	opt   []int32
	g     []int // the options' GPUs (int: counts go up to MaxGPUs, 2^50)
	pp    []float64
	rows  [][]int32
	h     stepHeap
}

func newChains(n int) *chains {
	return &chains{start: make([]int32, n+1), pos: make([]int32, n), opt: make([]int32, 0, 4*n),
		g: make([]int, 0, 4*n), pp: make([]float64, 0, 4*n), rows: make([][]int32, 0, 4*n), h: make(stepHeap, 0, n)}
}

// skip gives job k an empty chain.
func (c *chains) skip(k int) {
	c.pos[k] = -1
	c.start[k], c.start[k+1] = int32(len(c.opt)), int32(len(c.opt))
}

// add builds job k's chain (j, at lam) and pushes its first step: the
// upper concave hull, with the origin, of its options on the type of its
// Lagrangian choice, at their priced profits (see marginalGreedy). The
// job's options of a type are contiguous, GPUs ascending (see newModel).
func (c *chains) add(m *model, k int, j *mjob, lam []float64, tight bool) {
	c.skip(k)
	// (under a tight deadline, best: it climbs the hulls, cheaper than
	// lagChoice's every option; otherwise lagChoice, as exact solves have
	// always taken it: the two break ties between options of equal
	// Lagrangian profit other ways, and best changed which of several
	// optimal plans an exact solve returns, and so every simulated trace)
	var lc int
	if tight {
		_, lc = j.best(lam)
	} else {
		lc = j.lagChoice(lam)
	}
	if lc < 0 {
		return
	}
	nt := len(m.types)
	// the options of lc's type, around lc (dgroup.row is a group's type
	// row: no look at the groups' row lists of the other types)
	t := j.dual[j.opts[lc].grp].row
	lo, hi := lc, lc+1
	for lo > 0 && j.dual[j.opts[lo-1].grp].row == t {
		lo--
	}
	for hi < len(j.opts) && j.dual[j.opts[hi].grp].row == t {
		hi++
	}
	s0 := len(c.opt)
	var rows []int32
	for oi, grp := lo, int32(-1); oi < hi; oi++ {
		o := &j.opts[oi]
		if o.grp != grp {
			grp, rows = o.grp, j.groups[o.grp].rows
		}
		y3, x3 := o.p, float64(o.g)
		for _, r := range rows[1:] {
			if int(r) >= nt {
				y3 -= lam[r] * x3
			}
		}
		if !(y3 > 0) {
			continue
		}
		for len(c.opt) > s0 {
			x1, y1 := 0.0, 0.0
			if n := len(c.opt); n >= s0+2 {
				x1, y1 = float64(c.g[n-2]), c.pp[n-2]
			}
			x2, y2 := float64(c.g[len(c.g)-1]), c.pp[len(c.pp)-1]
			if (y2-y1)*(x3-x1) > (y3-y1)*(x2-x1) {
				break
			}
			n := len(c.opt) - 1
			c.opt, c.pp, c.g, c.rows = c.opt[:n], c.pp[:n], c.g[:n], c.rows[:n]
		}
		c.opt, c.pp = append(c.opt, int32(oi)), append(c.pp, y3)
		c.g, c.rows = append(c.g, o.g), append(c.rows, rows)
	}
	c.start[k+1] = int32(len(c.opt))
	if len(c.opt) > s0 {
		c.h = append(c.h, step{k: k, slope: c.pp[s0] / float64(c.g[s0])})
	}
}

// step is one step up a job's chain in marginalGreedy, worth slope per GPU.
type step struct {
	k     int
	slope float64
}

// stepHeap is a max-heap of steps by slope (ties: lower job position),
// typed (container/heap's interface boxes every step it pushes).
type stepHeap []step

func (h stepHeap) less(a, b int) bool {
	if h[a].slope != h[b].slope {
		return h[a].slope > h[b].slope
	}
	return h[a].k < h[b].k
}

// init orders h as a heap.
func (h stepHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h stepHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (h *stepHeap) push(s step) {
	*h = append(*h, s)
	x := *h
	for i := len(x) - 1; i > 0; {
		p := (i - 1) / 2
		if !x.less(i, p) {
			break
		}
		x[i], x[p] = x[p], x[i]
		i = p
	}
}

func (h *stepHeap) pop() step {
	x := *h
	s := x[0]
	n := len(x) - 1
	x[0] = x[n]
	*h = x[:n]
	(*h).down(0)
	return s
}

// greedyOver reports whether a greedy pass must stop: the clock's
// greedyEnd has passed, or the deadline for a greedy that is not an
// essential incumbent (search.optional).
func (sr *search) greedyOver() bool {
	return sr.clk.greedyOver() || sr.optional && sr.clk.expired()
}

// restOfCapacity hands the capacity left to the jobs of free (choice, fits
// capv less left) two ways and keeps the more profitable (ties: the
// first), with its capacity left: in job order, each job moved to its most
// profitable option that fits (upgradeInOrder), and a step at a time by
// profit per GPU added (spreadRest). The first is what exact solves have
// always used, and keeps their answers among plans of equal value (the
// policy experiments' simulated traces); the second keeps the GPUs from
// going whole to the first jobs (on 5,000 identical jobs the first alone
// left a 2 s solve at 11,004 against 12,073.6). Past the clock's greedyEnd
// only the first runs, as before.
func (sr *search) restOfCapacity(free []int32, left []int, choice []int, strict bool) {
	var spread, spreadLeft []int
	if !sr.greedyOver() {
		spread, spreadLeft = slices.Clone(choice), slices.Clone(left)
	}
	sr.upgradeInOrder(free, left, choice, strict)
	if spread == nil {
		return
	}
	sr.spreadRest(free, spreadLeft, spread, strict)
	if sr.freeProfit(free, spread) > sr.freeProfit(free, choice)+sr.eqTol {
		copy(choice, spread)
		copy(left, spreadLeft)
	}
}

// upgradeInOrder moves every job of free, in job order, to its most
// profitable option that fits what is left (upgrade), until the clock's
// greedyEnd (greedyPace; strict: the deadline too).
func (sr *search) upgradeInOrder(free []int32, left []int, choice []int, strict bool) {
	pace := greedyPace{strict: strict}
	for k, i := range free {
		if pace.over(sr.clk, &sr.m.jobs[i]) {
			break
		}
		choice[k] = sr.upgrade(left, &sr.m.jobs[i], choice[k])
	}
}
