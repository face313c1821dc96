package pollux

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// wyrand is a small, fast, seedable generator (wyhash's PRNG); the search
// draws millions of numbers per round.
type wyrand struct{ s uint64 }

func (r *wyrand) next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// intN returns a uniform integer in [0, n).
func (r *wyrand) intN(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// float64 returns a uniform number in [0, 1).
func (r *wyrand) float64() float64 { return float64(r.next()>>11) / (1 << 53) }

// threshold returns the integer t with P(next() < t) = p.
func threshold(p float64) uint64 {
	if p >= 1 {
		return math.MaxUint64
	}
	if p <= 0 {
		return 0
	}
	return uint64(p * (1 << 63) * 2)
}

// gaState is one round's NSGA-II search (pymoo 0.4 defaults: binary
// tournament by dominance then crowding, rank-and-crowding survival,
// duplicate elimination, as many offspring as the population).
type gaState struct {
	rng     *wyrand
	workers []*worker
	p       *Policy
	jobs    []*jobInfo
	J, V    int
	cap     int
	base    []int8
	total   float64

	// scratch buffers
	active []bool
	rs     []int
	spd    []float64
}

// worker holds one goroutine's generator and scratch buffers for mutation
// and repair.
type worker struct {
	rng   wyrand
	free  []int
	perm  []int
	taken []bool
}

func newWorker(V int) *worker {
	return &worker{free: make([]int, V), perm: make([]int, V), taken: make([]bool, V)}
}

type indiv struct {
	x     []int8
	f     [2]float64
	rank  int
	crowd float64
}

// hashOf is a 64-bit FNV-1a hash of a state, for duplicate elimination.
func hashOf(x []int8) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range x {
		h ^= uint64(uint8(v))
		h *= 1099511628211
	}
	return h
}

// run evolves the population from init and returns the chosen allocation,
// the final population and its non-dominated front (in population order).
func (g *gaState) run(init [][]int8) (best []int8, pop [][]int8, front [][]int8) {
	n := g.p.opt.Population
	seen := map[uint64]bool{}
	var cur []*indiv
	nw := min(runtime.GOMAXPROCS(0), 4)
	if g.J*g.V < 64 {
		nw = 1
	}
	for k := 0; k < nw; k++ {
		g.workers = append(g.workers, newWorker(g.V))
	}
	w0 := g.workers[0]
	w0.rng.s = g.rng.next()
	for _, x := range init {
		g.repair(w0, x)
		k := hashOf(x)
		if seen[k] {
			continue
		}
		seen[k] = true
		cur = append(cur, &indiv{x: x})
	}
	for _, in := range cur {
		g.evaluate(in)
	}
	cur = g.survive(cur, len(cur))
	for gen := 1; gen < g.p.opt.Generations; gen++ {
		off := g.mate(cur, n)
		for _, in := range off {
			g.evaluate(in)
		}
		cur = g.survive(append(cur, off...), n)
	}
	// Non-dominated front, best power mean (first on ties).
	bi := -1
	for i, in := range cur {
		if in.rank != 0 {
			continue
		}
		if bi < 0 || in.f[0] < cur[bi].f[0] {
			bi = i
		}
	}
	out := make([][]int8, len(cur))
	for i, in := range cur {
		out[i] = in.x
		if in.rank == 0 {
			front = append(front, in.x)
		}
	}
	return cur[bi].x, out, front
}

func (g *gaState) mate(pop []*indiv, n int) []*indiv {
	rng := g.rng
	off := make([]*indiv, 0, n)
	var spare [][]int8 // buffers of rejected duplicates, reused
	seen := make(map[uint64]bool, len(pop)+n)
	for _, in := range pop {
		seen[hashOf(in.x)] = true
	}
	for iter := 0; len(off) < n && iter < 100; iter++ {
		need := n - len(off)
		matings := (need + 1) / 2
		cand := make([][]int8, 0, 2*matings)
		for m := 0; m < matings; m++ {
			a := g.tournament(pop)
			b := g.tournament(pop)
			point := rng.intN(g.J)
			c1, c2 := g.buffer(&spare), g.buffer(&spare)
			cut := point * g.V
			copy(c1[:cut], b.x[:cut])
			copy(c1[cut:], a.x[cut:])
			copy(c2[:cut], a.x[:cut])
			copy(c2[cut:], b.x[cut:])
			cand = append(cand, c1, c2)
		}
		g.mutateRepair(cand)
		for _, x := range cand {
			k := hashOf(x)
			if seen[k] || len(off) == n {
				spare = append(spare, x)
				continue
			}
			seen[k] = true
			off = append(off, &indiv{x: x})
		}
	}
	return off
}

// buffer returns a state buffer, reusing a spare one when available (every
// element is overwritten by the crossover).
func (g *gaState) buffer(spare *[][]int8) []int8 {
	if k := len(*spare); k > 0 {
		b := (*spare)[k-1]
		*spare = (*spare)[:k-1]
		return b
	}
	return make([]int8, g.J*g.V)
}

// mutateRepair mutates and repairs candidates, split over the workers. Each
// candidate gets its own generator state drawn from the round's generator in
// order, so the result does not depend on the number of workers.
func (g *gaState) mutateRepair(cand [][]int8) {
	seeds := make([]uint64, len(cand))
	for i := range seeds {
		seeds[i] = g.rng.next()
	}
	nw := len(g.workers)
	if nw <= 1 || len(cand) < 8 {
		w := g.workers[0]
		for i, x := range cand {
			w.rng.s = seeds[i]
			g.mutate(w, x)
			g.repair(w, x)
		}
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < nw; k++ {
		wg.Add(1)
		go func(w *worker, k int) {
			defer wg.Done()
			for i := k; i < len(cand); i += nw {
				w.rng.s = seeds[i]
				g.mutate(w, cand[i])
				g.repair(w, cand[i])
			}
		}(g.workers[k], k)
	}
	wg.Wait()
}

func (g *gaState) tournament(pop []*indiv) *indiv {
	rng := g.rng
	a := pop[rng.intN(len(pop))]
	b := pop[rng.intN(len(pop))]
	switch dominates(a.f, b.f) {
	case 1:
		return a
	case -1:
		return b
	}
	if a.crowd > b.crowd {
		return a
	}
	if b.crowd > a.crowd {
		return b
	}
	if rng.intN(2) == 0 {
		return a
	}
	return b
}

// dominates returns 1 if a dominates b, −1 if b dominates a, 0 otherwise
// (both objectives minimised).
func dominates(a, b [2]float64) int {
	aBetter, bBetter := false, false
	for k := 0; k < 2; k++ {
		if a[k] < b[k] {
			aBetter = true
		} else if b[k] < a[k] {
			bBetter = true
		}
	}
	switch {
	case aBetter && !bBetter:
		return 1
	case bBetter && !aBetter:
		return -1
	}
	return 0
}

const thr10 = uint64(1844674407370955162) // P = 0.1

func (g *gaState) mutate(w *worker, x []int8) {
	rng := &w.rng
	J, V := g.J, g.V
	for j := 0; j < J; j++ {
		if rng.next() < thr10 {
			copy(x[j*V:(j+1)*V], g.base[j*V:(j+1)*V])
		}
	}
	for j := 0; j < J; j++ {
		if rng.next() < thr10 {
			row := x[j*V : (j+1)*V]
			for v := range row {
				if rng.next() < thr10 {
					row[v] = 0
				}
			}
		}
	}
	// (3) random increases on nodes with free capacity.
	free := w.free
	for v := 0; v < V; v++ {
		free[v] = g.cap
	}
	for j := 0; j < J; j++ {
		for v := 0; v < V; v++ {
			free[v] -= int(x[j*V+v])
		}
	}
	k := 0
	for v := 0; v < V; v++ {
		if free[v] >= 1 {
			k++
		}
	}
	if k == 0 {
		return
	}
	p1 := 1.0 / float64(k)
	t1 := threshold(p1)
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		k2 := 0
		for v := 0; v < V; v++ {
			if row[v] > 0 && free[v] >= 1 {
				k2++
			}
		}
		t12 := t1
		if k2 > 0 {
			p2 := 1.0 / float64(k2)
			t12 = threshold(p1 + p2 - p1*p2)
		}
		for v := 0; v < V; v++ {
			if free[v] < 1 {
				continue
			}
			t := t1
			if row[v] > 0 {
				t = t12
			}
			if rng.next() < t {
				lo := int(row[v])
				if lo < g.cap {
					row[v] = int8(lo + rng.intN(g.cap-lo+1))
				}
			}
		}
	}
}

func (g *gaState) repair(w *worker, x []int8) {
	rng := &w.rng
	J, V := g.J, g.V
	// (1) at most one distributed job per node, first in job order keeps it.
	taken := w.taken
	for v := range taken {
		taken[v] = false
	}
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		nz := 0
		for _, c := range row {
			if c > 0 {
				nz++
			}
		}
		if nz <= 1 {
			continue
		}
		for v := 0; v < V; v++ {
			if row[v] > 0 {
				if taken[v] {
					row[v] = 0
				} else {
					taken[v] = true
				}
			}
		}
	}
	// (2) per job, in random node order: cap replicas and at most 16 nodes.
	perm := w.perm
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		tot := 0
		for _, c := range row {
			tot += int(c)
		}
		nz := 0
		for _, c := range row {
			if c > 0 {
				nz++
			}
		}
		maxR := g.jobs[j].maxRepl
		if tot <= maxR && nz <= 16 {
			continue
		}
		for i := range perm {
			perm[i] = i
		}
		for i := V - 1; i > 0; i-- {
			k := rng.intN(i + 1)
			perm[i], perm[k] = perm[k], perm[i]
		}
		cum, nodes := 0, 0
		for _, v := range perm {
			c := int(row[v])
			if c == 0 {
				continue
			}
			if nodes >= 16 || cum >= maxR {
				row[v] = 0
				continue
			}
			c = min(c, maxR-cum)
			row[v] = int8(c)
			cum += c
			nodes++
		}
	}
	// (3) node capacity, jobs in order.
	for v := 0; v < V; v++ {
		used := 0
		for j := 0; j < J; j++ {
			c := int(x[j*V+v])
			if c == 0 {
				continue
			}
			c = min(c, g.cap-used)
			x[j*V+v] = int8(c)
			used += c
		}
	}
}

func (g *gaState) evaluate(in *indiv) {
	J, V := g.J, g.V
	x := in.x
	sumP := 0.0
	p := g.p.opt.P
	if g.active == nil {
		g.active, g.rs, g.spd = make([]bool, V), make([]int, J), make([]float64, J)
	}
	active := g.active
	for v := range active {
		active[v] = false
	}
	util := 0.0
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		n, r := 0, 0
		diff := false
		for v, c := range row {
			if c > 0 {
				n++
				r += int(c)
				active[v] = true
			}
			if c != g.jobs[j].base[v] {
				diff = true
			}
		}
		spd := g.p.speedup(g.jobs[j], n, r)
		g.rs[j], g.spd[j] = r, spd
		scaled := spd / g.total * float64(V)
		if diff {
			scaled *= g.jobs[j].factor
		}
		if p == -1 {
			sumP += 1 / (scaled + 1e-3)
		} else {
			sumP += math.Pow(scaled+1e-3, p)
		}
	}
	nActive := 0
	for _, a := range active {
		if a {
			nActive++
		}
	}
	totalActive := float64(nActive * g.cap)
	if totalActive > 0 {
		for j, r := range g.rs {
			if r > 0 {
				util += g.spd[j] / float64(r) * (float64(r) / totalActive)
			}
		}
	}
	mean := math.Pow(sumP/float64(J), 1/p)
	in.f = [2]float64{-mean, -util}
}

// survive keeps n individuals by non-dominated rank and crowding distance.
func (g *gaState) survive(pop []*indiv, n int) []*indiv {
	fronts := nonDominated(pop)
	var out []*indiv
	for r, front := range fronts {
		crowding(pop, front)
		for _, i := range front {
			pop[i].rank = r
		}
		if len(out)+len(front) > n {
			sorted := append([]int(nil), front...)
			// descending crowding; random order among equals
			for i := len(sorted) - 1; i > 0; i-- {
				k := g.rng.intN(i + 1)
				sorted[i], sorted[k] = sorted[k], sorted[i]
			}
			slices.SortStableFunc(sorted, func(a, b int) int {
				ca, cb := pop[a].crowd, pop[b].crowd
				switch {
				case ca > cb:
					return -1
				case ca < cb:
					return 1
				}
				return 0
			})
			for _, i := range sorted[:n-len(out)] {
				out = append(out, pop[i])
			}
			break
		}
		for _, i := range front {
			out = append(out, pop[i])
		}
	}
	return out
}

func nonDominated(pop []*indiv) [][]int {
	// Two objectives: sort lexicographically; a point can only be dominated
	// by points before it, and the members of a front have non-increasing f1,
	// so the last member of a front decides unless it ties on f1.
	idx := make([]int, len(pop))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		fa, fb := pop[a].f, pop[b].f
		switch {
		case fa[0] < fb[0]:
			return -1
		case fa[0] > fb[0]:
			return 1
		case fa[1] < fb[1]:
			return -1
		case fa[1] > fb[1]:
			return 1
		}
		return a - b // ties in index order (a stable sort)
	})
	// Per front: the smallest f1 so far and the f0 of its first member with
	// that f1 (members are added in ascending f0). A front dominates p iff
	// minF1 < p.f1, or minF1 == p.f1 with a strictly smaller f0. Domination is
	// monotone over fronts, so a binary search finds p's front (ENS-BS).
	var fronts [][]int
	var minF1, f0At []float64
	for _, i := range idx {
		f := pop[i].f
		k := sort.Search(len(fronts), func(k int) bool {
			return !(minF1[k] < f[1] || (minF1[k] == f[1] && f0At[k] < f[0]))
		})
		if k == len(fronts) {
			fronts = append(fronts, nil)
			minF1 = append(minF1, math.Inf(1))
			f0At = append(f0At, 0)
		}
		fronts[k] = append(fronts[k], i)
		if f[1] < minF1[k] {
			minF1[k], f0At[k] = f[1], f[0]
		}
	}
	for _, fr := range fronts {
		sort.Ints(fr)
	}
	return fronts
}

func crowding(pop []*indiv, front []int) {
	for _, i := range front {
		pop[i].crowd = 0
	}
	if len(front) <= 2 {
		for _, i := range front {
			pop[i].crowd = math.Inf(1)
		}
		return
	}
	idx := append([]int(nil), front...)
	for k := 0; k < 2; k++ {
		// Equivalent to stable sorts by f0, then by f1, of the front (which
		// is in index order): ties broken by the other objective, then index.
		slices.SortFunc(idx, func(a, b int) int {
			fa, fb := pop[a].f, pop[b].f
			if fa[k] != fb[k] {
				if fa[k] < fb[k] {
					return -1
				}
				return 1
			}
			if k == 1 && fa[0] != fb[0] {
				if fa[0] < fb[0] {
					return -1
				}
				return 1
			}
			return a - b
		})
		lo, hi := pop[idx[0]].f[k], pop[idx[len(idx)-1]].f[k]
		pop[idx[0]].crowd = math.Inf(1)
		pop[idx[len(idx)-1]].crowd = math.Inf(1)
		if hi == lo {
			continue
		}
		for m := 1; m < len(idx)-1; m++ {
			pop[idx[m]].crowd += (pop[idx[m+1]].f[k] - pop[idx[m-1]].f[k]) / (hi - lo)
		}
	}
}
