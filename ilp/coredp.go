package ilp

import (
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

// coreDP limits: rows in a state key (16 bits of usage each) and the
// states the program may create before it gives up (leaving the search to
// branch and bound).
const (
	coreMaxRows   = 8
	coreMaxUsage  = 1<<16 - 1
	coreMaxStates = 3_000_000
	coreMaxCells  = 1 << 24 // entries of the backward programs' tables
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
// exactly when its state space stays within coreMaxStates. It offers any
// better assignment it finds and reports whether the subproblem is settled:
// no assignment of the free jobs beats the incumbent by more than a step.
func (sr *search) coreDP(free []int32, capv []int, lam []float64, lp float64) bool {
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

	// admissible moves per core job
	n := len(core)
	moves := make([][]coreMove, n)
	for k, i := range core {
		j := &m.jobs[i]
		h, _ := j.best(lam)
		if h < limit {
			moves[k] = append(moves[k], coreMove{o: -1, rc: h})
		}
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := math.Max(h-(o.p-j.groups[o.grp].price(lam)*float64(o.g)), 0)
			if rc >= limit || !sr.fits(left, j, oi) {
				continue
			}
			mv := coreMove{o: oi, rc: rc, agg: int32(o.g)}
			for _, r := range j.groups[o.grp].rows {
				mv.use[r] = int32(o.g)
			}
			moves[k] = append(moves[k], mv)
		}
		if len(moves[k]) == 0 {
			return true
		}
	}

	cells := 0
	for r := 0; r <= nr; r++ {
		if r == nr {
			cells += (n + 1) * (aggCap + 1)
		} else {
			cells += (n + 1) * (left[r] + 1)
		}
	}
	if cells > coreMaxCells {
		return false
	}
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
				// rounded down so the bound stays a lower bound
				M[s] = math.Nextafter32(float32(run), float32(math.Inf(-1)))
			}
		}
		fill(n)
		for k := n - 1; k >= 0; k-- {
			for v := range nb {
				nb[v] = math.Inf(1)
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
	lower := func(k int, u *[coreMaxRows]int32, cost float64) float64 {
		lb := cost
		agg := aggCap
		for r := 0; r < nr; r++ {
			s := left[r] - int(u[r])
			lb = math.Max(lb, cost+float64(tail[r][k*(left[r]+1)+s]))
			if r < nt {
				agg -= int(u[r])
			}
		}
		return math.Max(lb, cost+float64(tail[nr][k*(aggCap+1)+agg]))
	}
	key := func(u *[coreMaxRows]int32) coreKey {
		var k coreKey
		for r := 0; r < nr; r++ {
			k[r/4] |= uint64(u[r]) << (16 * (r % 4))
		}
		return k
	}

	// forward program; parents and moves per stage for the backtrack
	cur := []coreState{{}}
	var next []coreState
	parent := make([][]int32, n)
	move := make([][]int32, n)
	index := make(map[coreKey]int32)
	states := 0
	for k := 0; k < n; k++ {
		if sr.ctx.Err() != nil {
			return false
		}
		next = next[:0]
		clear(index)
		var par []int32
		var mvs []int32
		for si := range cur {
			s := &cur[si]
			for x := range moves[k] {
				mv := &moves[k][x]
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
				nc := s.cost + mv.rc
				if lower(k+1, &nu, nc) >= limit {
					continue
				}
				kk := key(&nu)
				if at, ok := index[kk]; ok {
					if nc < next[at].cost {
						next[at].cost = nc
						par[at], mvs[at] = int32(si), int32(x)
					}
					continue
				}
				index[kk] = int32(len(next))
				next = append(next, coreState{u: nu, cost: nc})
				par = append(par, int32(si))
				mvs = append(mvs, int32(x))
			}
		}
		states += len(next)
		if states > coreMaxStates {
			return false
		}
		parent[k], move[k] = par, mvs
		cur, next = next, cur
		if len(cur) == 0 {
			return true // nothing beats the incumbent
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
	if bi < 0 || bd >= limit {
		return true
	}
	choice := slices.Clone(full)
	at := int32(bi)
	for k := n - 1; k >= 0; k-- {
		x := move[k][at]
		choice[pos[k]] = moves[k][x].o
		at = parent[k][at]
	}
	before := sr.bestP
	sr.offerFree(free, choice)
	// exact over the admissible choices: the best complete state is the
	// optimum of the subproblem when it improved the incumbent
	return sr.bestP > before || bd >= G-sr.eqTol
}
