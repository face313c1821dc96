package ilp

import "math"

// pairStates caps the work of pairImprove and pairBound: states (products
// of the two residual capacities) times the jobs in the program;
// pairMaxStates caps the states alone, which bounds the programs' tables.
const (
	pairStates    = 30_000_000
	pairMaxStates = 1 << 21
)

// pairSize returns the states of a two-row program over capacities C1 and
// C2, or false when they exceed pairMaxStates (checked without overflow).
func pairSize(C1, C2 int) (int, bool) {
	if C1 >= pairMaxStates || C2 >= pairMaxStates || (C1+1)*(C2+1) > pairMaxStates {
		return 0, false
	}
	return (C1 + 1) * (C2 + 1), true
}

// pairImprove re-optimises the choices of the free jobs (parallel to free,
// improved in place) on two type rows t1 and t2 at once, exactly: every job
// with options on t1 or t2 may take any of them, keep its current choice on
// another type, or (when its choice is on t1 or t2) take none; the other
// jobs keep their choices. capv is the capacity left for the free jobs. It
// finds improvements that move jobs between the two types together, which
// the one-type programs of improveByType cannot. Quota rows are not
// modelled: the caller checks the result. It returns whether the profit
// improved (false also when the program would be too large).
func (sr *search) pairImprove(free []int32, capv []int, choice []int, t1, t2 int) bool {
	m := sr.m
	C1, C2 := capv[t1], capv[t2]
	if C1 < 0 || C2 < 0 {
		return false
	}
	W := C2 + 1
	S, ok := pairSize(C1, C2)
	if !ok {
		return false
	}
	type item struct {
		g1, g2 int
		p      float64
		oi     int
	}
	var ks []int
	var items [][]item
	var bases []float64
	old := 0.0
	for k, i := range free {
		j := &m.jobs[i]
		var its []item
		for oi := range j.opts {
			o := &j.opts[oi]
			switch {
			case j.onType(oi, t1) && o.g <= C1:
				its = append(its, item{g1: o.g, p: o.p, oi: oi})
			case j.onType(oi, t2) && o.g <= C2:
				its = append(its, item{g2: o.g, p: o.p, oi: oi})
			}
		}
		c := choice[k]
		base := 0.0
		if c >= 0 && !j.onType(c, t1) && !j.onType(c, t2) {
			base = j.opts[c].p
		}
		if c >= 0 && base == 0 {
			old += j.opts[c].p
		}
		if len(its) == 0 {
			continue
		}
		old += base
		ks = append(ks, k)
		items = append(items, its)
		bases = append(bases, base)
	}
	n := len(ks)
	if n == 0 || S*n > pairStates || !sr.clk.affords(16*S+n*S) {
		return false
	}
	// old counts the profit of every job whose choice is on t1 or t2 (all of
	// them are in the program: they have options there) plus the bases
	dp := make([]float64, S)
	next := make([]float64, S)
	from := make([]int8, n*S) // 0: base/none, 1+x: items[x]
	for x := range items {
		if len(items[x]) > 126 {
			return false
		}
	}
	for x := 0; x < n; x++ {
		if sr.clk.expired() {
			return false
		}
		base := bases[x]
		fr := from[x*S : (x+1)*S]
		for s := range next {
			next[s] = dp[s] + base
		}
		for ii, it := range items[x] {
			if it.p <= base {
				continue
			}
			tag := int8(ii + 1)
			if sr.clk.tick(S) {
				return false
			}
			for c1 := it.g1; c1 <= C1; c1++ {
				src := dp[(c1-it.g1)*W : (c1-it.g1)*W+W]
				dst := next[c1*W : c1*W+W]
				fd := fr[c1*W : c1*W+W]
				for c2 := it.g2; c2 < W; c2++ {
					if v := src[c2-it.g2] + it.p; v > dst[c2] {
						dst[c2] = v
						fd[c2] = tag
					}
				}
			}
		}
		dp, next = next, dp
	}
	if dp[S-1] <= old+sr.eqTol {
		return false
	}
	c1, c2 := C1, C2
	for x := n - 1; x >= 0; x-- {
		k := ks[x]
		tag := from[x*S+c1*W+c2]
		if tag == 0 {
			if bases[x] == 0 {
				choice[k] = -1
			}
			continue
		}
		it := items[x][tag-1]
		choice[k] = it.oi
		c1 -= it.g1
		c2 -= it.g2
	}
	return true
}

// pairHeuristic improves the incumbent with pairImprove over every pair of
// type rows, on the core of the node (jobs with more than one choice that
// could still beat the incumbent at multipliers lam and bound lp),
// repeating while it improves.
func (sr *search) pairHeuristic(free []int32, capv []int, lam []float64, lp float64) {
	nt := len(sr.m.types)
	for round := 0; round < 4 && sr.hasBest && lp > sr.target() && !sr.clk.expired(); round++ {
		full, pos, core, left, ok := sr.coreOf(free, capv, lam, lp)
		if !ok || len(core) == 0 {
			return
		}
		// the incumbent restricted to the core, with the capacity the
		// non-core jobs' incumbent choices leave
		inc := make([]int, len(core))
		left = append(left[:0], capv...)
		for _, i := range free {
			if c := sr.best[i]; c >= 0 {
				apply(left, &sr.m.jobs[i], c, 1)
			}
		}
		for c, k := range pos {
			i := free[k]
			inc[c] = sr.best[i]
			if inc[c] >= 0 {
				apply(left, &sr.m.jobs[i], inc[c], -1)
			}
			full[k] = -1
		}
		for k, i := range free {
			full[k] = sr.best[i]
		}
		improved := false
		for t1 := 0; t1 < nt; t1++ {
			for t2 := t1 + 1; t2 < nt; t2++ {
				if sr.clk.expired() {
					return
				}
				try := append([]int(nil), inc...)
				if !sr.pairImprove(core, left, try, t1, t2) {
					continue
				}
				for c, k := range pos {
					full[k] = try[c]
				}
				before := sr.bestP
				sr.offerFree(free, full)
				if sr.bestP > before {
					improved = true
					break // recompute the core against the new incumbent
				}
				for c, k := range pos {
					full[k] = inc[c]
				}
			}
			if improved {
				break
			}
		}
		if !improved {
			return
		}
	}
}

// pairBound returns an upper bound on the profit the free jobs can add
// within capv: the Lagrangian relaxation at lam of every coupling row except
// the type rows t1 and t2, which a two-dimensional knapsack program keeps
// exact; every job may take any of its options or none. ok is false when
// the program would be too large or ctx is done.
func (sr *search) pairBound(free []int32, capv []int, lam []float64, t1, t2 int) (bound float64, ok bool) {
	m := sr.m
	C1, C2 := capv[t1], capv[t2]
	if C1 < 0 || C2 < 0 {
		return 0, true // no assignment fits: any bound holds
	}
	W := C2 + 1
	S, ok := pairSize(C1, C2)
	if !ok || S*len(free) > pairStates || !sr.clk.affords(16*S) {
		return 0, false
	}
	bound = 0
	for r := range capv {
		if r != t1 && r != t2 {
			bound += lam[r] * float64(capv[r])
		}
	}
	dp := make([]float64, S)
	next := make([]float64, S)
	type item struct {
		g1, g2 int
		v      float64
	}
	var its []item
	for _, i := range free {
		if sr.clk.expired() {
			return 0, false
		}
		j := &m.jobs[i]
		its = its[:0]
		base := 0.0 // best priced value off t1 and t2 (or none)
		consider := func(oi int) {
			o := &j.opts[oi]
			on1, on2 := false, false
			pi := 0.0
			for _, r := range j.groups[o.grp].rows {
				switch int(r) {
				case t1:
					on1 = true
				case t2:
					on2 = true
				default:
					pi += lam[r]
				}
			}
			v := o.p - pi*float64(o.g)
			switch {
			case on1 && o.g <= C1:
				its = append(its, item{g1: o.g, v: v})
			case on2 && o.g <= C2:
				its = append(its, item{g2: o.g, v: v})
			case !on1 && !on2:
				base = max(base, v)
			}
		}
		for oi := range j.opts {
			consider(oi)
		}
		if len(its) == 0 {
			bound += base
			continue
		}
		for s := range next {
			next[s] = dp[s] + base
		}
		for _, it := range its {
			if it.v <= base {
				continue
			}
			if sr.clk.tick(S) {
				return 0, false
			}
			for c1 := it.g1; c1 <= C1; c1++ {
				src := dp[(c1-it.g1)*W : (c1-it.g1)*W+W]
				dst := next[c1*W : c1*W+W]
				for c2 := it.g2; c2 < W; c2++ {
					if v := src[c2-it.g2] + it.v; v > dst[c2] {
						dst[c2] = v
					}
				}
			}
		}
		dp, next = next, dp
	}
	return bound + dp[S-1], true
}

// pairBounds returns the tightest pairBound over every pair of type rows for
// a node whose Lagrangian bound at lam is lp: the jobs that reduced costs fix
// keep their single choice, the core's programs run within the capacity
// they leave. It returns -Inf when no assignment can beat the incumbent,
// and +Inf when every program is too large or ctx is done.
func (sr *search) pairBounds(free []int32, capv []int, lam []float64, lp float64) float64 {
	full, _, core, left, ok := sr.coreOf(free, capv, lam, lp)
	if !ok {
		return math.Inf(-1)
	}
	fixed := sr.freeProfit(free, full) // core jobs are -1 in full
	best := math.Inf(1)
	nt := len(sr.m.types)
	for t1 := 0; t1 < nt; t1++ {
		for t2 := t1 + 1; t2 < nt; t2++ {
			if sr.clk.expired() {
				return best
			}
			if b, ok := sr.pairBound(core, left, lam, t1, t2); ok {
				best = math.Min(best, fixed+b)
			}
		}
	}
	return best
}
