package ilp

import (
	"cmp"
	"math"
	"slices"
)

// The exact core program.
//
// At multipliers λ every assignment x of the free jobs has profit
//
//	L(λ) − D(x),  D(x) = Σ_j rc_j(x_j) + Σ_r λ_r·slack_r(x),
//
// where L(λ) is the Lagrangian bound, rc_j ≥ 0 the reduced cost of job j's
// choice and slack_r ≥ 0 the capacity x leaves unused on coupling row r. An
// assignment beats the incumbent only if D(x) < G = L(λ) − target, so each
// job may only take a choice with rc < G; jobs left with one such choice are
// fixed, and the rest form the core. coreDP enumerates the core's
// assignments with D < G exactly, as a dynamic program over the jobs whose
// states are the vectors of row usage (keeping the cheapest partial cost
// per vector). A state is dropped as soon as a lower bound on the cost of
// completing it reaches G: for every row (and for the aggregate row of all
// type rows, priced at the smallest type multiplier) a backward knapsack
// program over the remaining jobs gives the least reduced cost plus priced
// slack of any completion that fits the row's remaining capacity. With a
// good incumbent G is small and a few thousand states remain where the
// Lagrangian and one-row bounds of branch and bound leave thousands of
// nodes: the program sees every row at once, including the parity and
// filling effects that keep the integer optimum below the LP bound.

// coreDP limits: rows in a state key (16 bits of usage each), the states
// the program may create before it gives up (leaving the search to the
// other heuristics and branch and bound; a first attempt before the
// costlier heuristics gets fewer) and the size of its backward tables.
const (
	coreMaxRows     = 8
	coreMaxUsage    = 1<<16 - 1
	coreMaxStates   = 2_000_000
	coreFirstStates = 250_000
	coreMaxCells    = 1 << 24 // entries of the backward programs' tables
)

type coreKey [2]uint64

// coreState is one state of the forward program: the usage of every row
// and the cheapest partial cost reaching it.
type coreState struct {
	u    [coreMaxRows]int32
	cost float64
}

// coreMove is one admissible choice of a core job.
type coreMove struct {
	o   int // option index in the model job, -1 for none
	rc  float64
	use [coreMaxRows]int32 // GPUs on each row
	agg int32              // GPUs on the type rows
}

// coreDP solves the node's subproblem (free jobs within capv, Lagrangian
// bound lp at lam, lp including the profit of the jobs fixed on the path)
// exactly when its state space stays within maxStates states. It offers any
// better assignment it finds and reports whether the subproblem is settled:
// no assignment of the free jobs beats the incumbent by more than a step.
func (sr *search) coreDP(free []int32, capv []int, lam []float64, lp float64, maxStates int) bool {
	m := sr.m
	nr := m.nrows
	if nr > coreMaxRows {
		return false
	}
	for _, c := range capv {
		if c > coreMaxUsage {
			return false
		}
	}
	if sr.clk.expired() {
		return false
	}
	full, pos, core, left, ok := sr.coreOf(free, capv, lam, lp)
	if !ok {
		return true // every assignment is at most the target
	}
	G := lp - sr.target()
	if len(core) == 0 {
		sr.offerFree(free, full)
		return true
	}
	// a completion whose lower bound reaches G is dropped; the slack keeps
	// states whose bound is within rounding of G
	limit := G + sr.eqTol

	nt := len(m.types)
	mu := math.Inf(1)
	for t := 0; t < nt; t++ {
		mu = math.Min(mu, lam[t])
	}
	aggCap := 0
	for t := 0; t < nt; t++ {
		aggCap += left[t]
	}

	// admissible moves per core job (reduced costs clipped at 0: a
	// rounding below it would break the programs' monotone costs)
	n := len(core)
	moves := make([][]coreMove, n)
	cands := sr.candidates(core, left, lam, lp)
	if cands == nil {
		return false // out of time (core is not empty)
	}
	for k, cs := range cands {
		j := &m.jobs[core[k]]
		if sr.clk.tick(64 * len(cs)) {
			sr.interrupt(lp)
			return false
		}
		for _, c := range cs {
			mv := coreMove{o: c.o, rc: math.Max(c.rc, 0)}
			if c.o >= 0 {
				o := &j.opts[c.o]
				mv.agg = int32(o.g)
				for _, r := range j.groups[o.grp].rows {
					mv.use[r] = int32(o.g)
				}
			}
			moves[k] = append(moves[k], mv)
		}
		if len(moves[k]) == 0 {
			return true
		}
		// cheapest first: a pass stops at the first move that costs too much
		slices.SortStableFunc(moves[k], func(a, b coreMove) int { return cmp.Compare(a.rc, b.rc) })
	}

	cells := 0
	for r := 0; r <= nr; r++ {
		if r == nr {
			cells += (n + 1) * (aggCap + 1)
		} else {
			cells += (n + 1) * (left[r] + 1)
		}
	}
	if cells > coreMaxCells || !sr.clk.affords(coreCellNanos*cells) {
		return false
	}
	// jobs whose moves differ most in GPUs first: the states then spread
	// early, while the backward bounds over the many remaining jobs prune
	// well, and the later jobs' small moves merge into existing states
	spread := make([]int32, n)
	for k := range moves {
		lo, hi := int32(math.MaxInt32), int32(0)
		for _, mv := range moves[k] {
			lo, hi = min(lo, mv.agg), max(hi, mv.agg)
		}
		spread[k] = hi - lo
	}
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(spread[b] - spread[a]) })
	moves2, pos2 := make([][]coreMove, n), make([]int, n)
	for k, o := range order {
		moves2[k], pos2[k] = moves[o], pos[o]
	}
	moves, pos = moves2, pos2
	// backward programs: tail[r][k*(L_r+1)+s] is a lower bound on the cost
	// (reduced costs plus priced slack of row r) of any choice of jobs
	// k..n-1 that fits s units of row r; row nr is the aggregate row
	rowsUsed := nr + 1
	capOf := func(r int) int {
		if r == nr {
			return aggCap
		}
		return left[r]
	}
	priceOf := func(r int) float64 {
		if r == nr {
			return mu
		}
		return lam[r]
	}
	useOf := func(mv *coreMove, r int) int {
		if r == nr {
			return int(mv.agg)
		}
		return int(mv.use[r])
	}
	tail := make([][]float32, rowsUsed)
	for r := 0; r < rowsUsed; r++ {
		L := capOf(r)
		W := L + 1
		T := make([]float32, (n+1)*W)
		B := make([]float64, W)
		nb := make([]float64, W)
		for v := range B {
			B[v] = math.Inf(1)
		}
		B[0] = 0
		price := priceOf(r)
		fill := func(k int) {
			M := T[k*W : (k+1)*W]
			run := math.Inf(1)
			for s := 0; s <= L; s++ {
				run = math.Min(run+price, B[s])
				M[s] = float32(run) // see lower for the rounding
			}
		}
		fill(n)
		for k := n - 1; k >= 0; k-- {
			for v := range nb {
				nb[v] = math.Inf(1)
			}
			if sr.clk.tick(len(moves[k]) * W) {
				return false
			}
			for x := range moves[k] {
				mv := &moves[k][x]
				g := useOf(mv, r)
				for v := g; v <= L; v++ {
					if c := B[v-g] + mv.rc; c < nb[v] {
						nb[v] = c
					}
				}
			}
			B, nb = nb, B
			fill(k)
		}
		tail[r] = T
	}
	trace("coreDP.tables")
	// lower bounds a state's D after job k-1; the tables' entries are
	// non-negative and float32 rounds them by at most a relative 2^-24,
	// which the factor undoes
	const down = 1 - 1.0/(1<<22)
	lower := func(k int, u *[coreMaxRows]int32, cost float64) float64 {
		var mx float32
		agg := aggCap
		for r := 0; r < nr; r++ {
			s := left[r] - int(u[r])
			mx = max(mx, tail[r][k*(left[r]+1)+s])
			if r < nt {
				agg -= int(u[r])
			}
		}
		mx = max(mx, tail[nr][k*(aggCap+1)+agg])
		return cost + float64(mx)*down
	}
	// The forward program enumerates the states with D below a limit. A
	// pass that finds a complete state has found the optimum (it enumerated
	// every state below the limit); a pass that finds none proves D ≥ the
	// limit. The states grow steeply with the limit, so the passes start
	// just above the backward tables' lower bound on D, where the optimum
	// usually is (with a grid, the profit lp − D is a whole number of
	// steps, which rounds the bound up), then go a step, or 1/64 of the
	// way to G, further, and four times further each pass, up to G.
	dlb := 0.0
	for r := 0; r < nr; r++ {
		dlb = math.Max(dlb, float64(tail[r][left[r]]))
	}
	dlb = math.Max(dlb, float64(tail[nr][aggCap])) * down
	eps := 2 * sr.eqTol
	if g := sr.grid; g > 0 {
		dev := g - sr.step // twice the values' deviation from the grid, and more
		best := math.Floor((lp-dlb+dev)/g) * g
		dlb = math.Max(dlb, lp-best-dev)
		eps += 2 * dev
	}
	lims := []float64{dlb + eps}
	for excess := math.Max(sr.step, (limit-dlb)/64); lims[len(lims)-1] < limit; excess *= 4 {
		lims = append(lims, dlb+eps+excess)
	}
	states := 0
	for _, lim := range lims {
		lim = math.Min(lim, limit)
		bd, choice, ok := sr.coreForward(moves, left, lam, lim, lower, &states, maxStates)
		if !ok {
			return false
		}
		if choice == nil {
			continue // D ≥ lim for every assignment
		}
		for k := range choice {
			full[pos[k]] = choice[k]
		}
		before := sr.bestP
		sr.offerFree(free, full)
		// exact over the admissible choices: the best complete state is the
		// optimum of the subproblem
		return sr.bestP > before || bd >= G-sr.eqTol
	}
	return true // nothing beats the incumbent
}

// coreForward runs the forward program of coreDP over the states with
// lower bound below lim. It returns the cheapest complete state's D and the
// core choice reaching it (nil when no complete state is below lim), and ok
// false when the states (counted in *states across passes) exceed
// maxStates or ctx is done.
func (sr *search) coreForward(moves [][]coreMove, left []int, lam []float64, lim float64,
	lower func(k int, u *[coreMaxRows]int32, cost float64) float64, states *int, maxStates int) (bd float64, choice []int, ok bool) {
	nr := sr.m.nrows
	n := len(moves)
	key := func(u *[coreMaxRows]int32) coreKey {
		var k coreKey
		for r := 0; r < nr; r++ {
			k[r/4] |= uint64(u[r]) << (16 * (r % 4))
		}
		return k
	}
	cur := []coreState{{}}
	var next []coreState
	// parent state and move of every state, stage after stage
	start := make([]int, n+1)
	var parent, move []int32
	var index coreIndex
	for k := 0; k < n; k++ {
		if sr.clk.expired() {
			return 0, nil, false
		}
		next = next[:0]
		index.reset()
		start[k] = len(parent)
		for si := range cur {
			s := &cur[si]
			if sr.clk.tick(len(moves[k]) * (nr + 8)) {
				return 0, nil, false
			}
			for x := range moves[k] {
				mv := &moves[k][x]
				nc := s.cost + mv.rc
				if nc >= lim {
					break
				}
				var nu [coreMaxRows]int32
				fits := true
				for r := 0; r < nr; r++ {
					nu[r] = s.u[r] + mv.use[r]
					if int(nu[r]) > left[r] {
						fits = false
						break
					}
				}
				if !fits {
					continue
				}
				if lower(k+1, &nu, nc) >= lim {
					continue
				}
				at, found := index.find(key(&nu), int32(len(next)))
				if found {
					if nc < next[at].cost {
						next[at].cost = nc
						parent[start[k]+int(at)], move[start[k]+int(at)] = int32(si), int32(x)
					}
					continue
				}
				next = append(next, coreState{u: nu, cost: nc})
				parent = append(parent, int32(si))
				move = append(move, int32(x))
			}
		}
		*states += len(next)
		if *states > maxStates {
			return 0, nil, false
		}
		cur, next = next, cur
		if len(cur) == 0 {
			return 0, nil, true
		}
	}
	// the cheapest complete state, slack priced
	bi, bd := -1, math.Inf(1)
	for si := range cur {
		s := &cur[si]
		d := s.cost
		for r := 0; r < nr; r++ {
			d += lam[r] * float64(left[r]-int(s.u[r]))
		}
		if d < bd {
			bi, bd = si, d
		}
	}
	if bi < 0 || bd >= lim {
		return 0, nil, true
	}
	choice = make([]int, n)
	at := int32(bi)
	for k := n - 1; k >= 0; k-- {
		x := move[start[k]+int(at)]
		choice[k] = moves[k][x].o
		at = parent[start[k]+int(at)]
	}
	return bd, choice, true
}

// coreIndex is an open-addressing hash table from state keys to indices in
// a stage's state slice, reused across stages: an entry belongs to the
// current stage when its stamp is the table's generation.
type coreIndex struct {
	keys  []coreKey
	vals  []int32
	stamp []uint32
	gen   uint32
	n     int
}

// reset empties the table.
func (ix *coreIndex) reset() {
	ix.gen++
	ix.n = 0
	if ix.keys == nil || ix.gen == 0 {
		ix.grow(1 << 10)
	}
}

func (ix *coreIndex) grow(size int) {
	keys, vals, stamp, gen := ix.keys, ix.vals, ix.stamp, ix.gen
	ix.keys = make([]coreKey, size)
	ix.vals = make([]int32, size)
	ix.stamp = make([]uint32, size)
	ix.gen, ix.n = 1, 0
	for i := range stamp {
		if stamp[i] == gen {
			ix.find(keys[i], vals[i])
		}
	}
}

// find returns the index stored for k, or stores v for it and returns v
// with found false.
func (ix *coreIndex) find(k coreKey, v int32) (int32, bool) {
	if 2*(ix.n+1) > len(ix.vals) {
		ix.grow(2 * len(ix.vals))
	}
	mask := uint64(len(ix.vals) - 1)
	h := (k[0]*0x9E3779B97F4A7C15 ^ k[1]*0xC2B2AE3D27D4EB4F) >> 17
	for i := h & mask; ; i = (i + 1) & mask {
		if ix.stamp[i] != ix.gen {
			ix.keys[i], ix.vals[i], ix.stamp[i] = k, v, ix.gen
			ix.n++
			return v, false
		}
		if ix.keys[i] == k {
			return ix.vals[i], true
		}
	}
}
