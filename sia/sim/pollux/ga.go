package pollux

import (
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/sia-sched/sia/goodput"
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

	// scratch, reused across generations
	seen  dedup
	spare []*indiv // individuals not in the population, their buffers reusable
	off   []*indiv
	cand  []*indiv
	seeds []uint64
	comb  []*indiv // the population and its offspring, input of survive
	sv    survival
}

// worker holds one goroutine's generator and scratch buffers for mutation
// and repair.
type worker struct {
	rng   wyrand
	free  []int
	open  []int // nodes with free capacity (mutation step 3)
	perm  []int
	taken []bool
	used  []int
	t12   []uint64
	// evaluation: batch-size searches (not safe to share) and speedups
	search goodput.Searcher
	spd    []float64
}

func newWorker(V int) *worker {
	return &worker{free: make([]int, V), open: make([]int, 0, V), perm: make([]int, V), taken: make([]bool, V), used: make([]int, V), t12: make([]uint64, V+1)}
}

// indiv is one allocation of the population: x holds replicas per (job,
// vnode), row-major by job. The repair fills st and nActive, which is all the
// evaluation needs.
type indiv struct {
	x       []int8
	st      []rowStat
	nActive int // vnodes with at least one replica
	f       [2]float64
	rank    int
	crowd   float64
	keep    bool // survivor mark, used only inside run
}

// rowStat summarises one job's row after the repair.
type rowStat struct {
	n, r int  // vnodes used, replicas
	diff bool // differs from the job's current allocation
}

// newIndiv returns an individual with buffers for the round's size, reusing a
// spare one when available (the crossover overwrites every element of x and
// the repair every element of st).
func (g *gaState) newIndiv() *indiv {
	if k := len(g.spare); k > 0 {
		in := g.spare[k-1]
		g.spare = g.spare[:k-1]
		return in
	}
	return &indiv{x: make([]int8, g.J*g.V), st: make([]rowStat, g.J)}
}

// run evolves the population from init and returns the chosen allocation,
// the final population and its non-dominated front (in population order).
func (g *gaState) run(init [][]int8) (best []int8, pop [][]int8, front [][]int8) {
	n := g.p.opt.Population
	var cur []*indiv
	nw := min(runtime.GOMAXPROCS(0), 4)
	for k := 0; k < nw; k++ {
		g.workers = append(g.workers, newWorker(g.V))
	}
	w0 := g.workers[0]
	w0.rng.s = g.rng.next()
	g.seen.reset(len(init))
	for _, x := range init {
		in := &indiv{x: x, st: make([]rowStat, g.J)}
		g.repair(w0, in)
		if !g.seen.add(x) {
			continue
		}
		cur = append(cur, in)
	}
	for _, in := range cur {
		g.evaluate(w0, in)
	}
	cur = g.survive(cur, len(cur))
	for gen := 1; gen < g.p.opt.Generations; gen++ {
		off := g.mate(cur, n)
		g.comb = append(append(g.comb[:0], cur...), off...)
		cur = g.survive(g.comb, n)
		g.recycle(cur)
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

// recycle moves the individuals of g.comb that did not survive into cur to
// the spare list.
func (g *gaState) recycle(cur []*indiv) {
	for _, in := range cur {
		in.keep = true
	}
	for _, in := range g.comb {
		if !in.keep {
			g.spare = append(g.spare, in)
		}
	}
	for _, in := range cur {
		in.keep = false
	}
}

func (g *gaState) mate(pop []*indiv, n int) []*indiv {
	rng := g.rng
	off := g.off[:0]
	g.seen.reset(len(pop) + n)
	for _, in := range pop {
		g.seen.add(in.x)
	}
	for iter := 0; len(off) < n && iter < 100; iter++ {
		need := n - len(off)
		matings := (need + 1) / 2
		cand := g.cand[:0]
		for m := 0; m < matings; m++ {
			a := g.tournament(pop)
			b := g.tournament(pop)
			point := rng.intN(g.J)
			c1, c2 := g.newIndiv(), g.newIndiv()
			cut := point * g.V
			copy(c1.x[:cut], b.x[:cut])
			copy(c1.x[cut:], a.x[cut:])
			copy(c2.x[:cut], a.x[:cut])
			copy(c2.x[cut:], b.x[cut:])
			cand = append(cand, c1, c2)
		}
		g.mutateRepair(cand)
		for _, c := range cand {
			if len(off) == n || !g.seen.add(c.x) {
				g.spare = append(g.spare, c)
				continue
			}
			off = append(off, c)
		}
		g.cand = cand
	}
	g.off = off
	return off
}

// mutateRepair mutates, repairs and evaluates candidates, split over the
// workers. Each
// candidate gets its own generator state drawn from the round's generator in
// order, so the result does not depend on the number of workers.
func (g *gaState) mutateRepair(cand []*indiv) {
	seeds := g.seeds[:0]
	for range cand {
		seeds = append(seeds, g.rng.next())
	}
	g.seeds = seeds
	nw := len(g.workers)
	if nw <= 1 || len(cand)*g.J*g.V < 1024 {
		w := g.workers[0]
		for i, in := range cand {
			w.rng.s = seeds[i]
			g.mutate(w, in.x)
			g.repair(w, in)
			g.evaluate(w, in)
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
				g.mutate(w, cand[i].x)
				g.repair(w, cand[i])
				g.evaluate(w, cand[i])
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
	// (3) random increases on nodes with free capacity (measured once,
	// before the increases).
	free := w.free
	for v := range free {
		free[v] = g.cap
	}
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		for v, c := range row {
			free[v] -= int(c)
		}
	}
	open := w.open[:0]
	for v, f := range free {
		if f >= 1 {
			open = append(open, v)
		}
	}
	w.open = open
	k := len(open)
	if k == 0 {
		return
	}
	p1 := 1.0 / float64(k)
	t1 := threshold(p1)
	clear(w.t12[:k+1]) // thresholds for k2 = 1..k nodes of the job among the k
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		k2 := 0
		for _, v := range open {
			if row[v] > 0 {
				k2++
			}
		}
		t12 := t1
		if k2 > 0 {
			t12 = w.t12[k2]
			if t12 == 0 {
				p2 := 1.0 / float64(k2)
				t12 = threshold(p1 + p2 - p1*p2)
				w.t12[k2] = t12
			}
		}
		for _, v := range open {
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

// repair makes x feasible, job by job in order, and records each row's
// summary for the evaluation. Per job: (1) at most one distributed job per
// node, the first in job order keeps it; (2) in random node order, at most
// the job's replicas and 16 nodes; (3) node capacity, earlier jobs first.
// Each step of a job depends only on the earlier jobs' rows, so doing all
// three per job equals doing each over all jobs.
func (g *gaState) repair(w *worker, in *indiv) {
	J, V := g.J, g.V
	x := in.x
	taken, used := w.taken, w.used
	clear(taken)
	clear(used)
	for j := 0; j < J; j++ {
		row := x[j*V : (j+1)*V]
		tot, nz := rowSums(row)
		if nz > 1 {
			tot, nz = 0, 0
			for v, c := range row {
				if c > 0 {
					if taken[v] {
						row[v] = 0
						continue
					}
					taken[v] = true
					tot += int(c)
					nz++
				}
			}
		}
		if maxR := g.jobs[j].maxRepl; tot > maxR || nz > 16 {
			g.capReplicas(w, row, maxR)
		}
		n, r := 0, 0
		for v, c := range row {
			if c == 0 {
				continue
			}
			c = int8(min(int(c), g.cap-used[v]))
			row[v] = c
			used[v] += int(c)
			if c > 0 {
				n++
				r += int(c)
			}
		}
		in.st[j] = rowStat{n: n, r: r, diff: !slices.Equal(row, g.base[j*V:(j+1)*V])}
	}
	in.nActive = 0
	for _, u := range used {
		if u > 0 {
			in.nActive++
		}
	}
}

// rowSums returns a row's replicas and the number of its nodes in use. It
// reads eight cells at a time, which relies on every cell being in [0, 7]
// (states hold 0..cap replicas per vnode, cap ≤ 4).
func rowSums(row []int8) (tot, nz int) {
	b := int8Bytes(row)
	for ; len(b) >= 8; b = b[8:] {
		w := binary.LittleEndian.Uint64(b)
		tot += int((w * ones8) >> 56) // byte sums ≤ 56: no carries
		nz += bits.OnesCount64((w | w>>1 | w>>2) & ones8)
	}
	for _, c := range b {
		if c > 0 {
			tot += int(c)
			nz++
		}
	}
	return tot, nz
}

const ones8 = 0x0101010101010101

// capReplicas keeps at most maxR replicas on at most 16 nodes of a row,
// visiting its nodes in random order.
func (g *gaState) capReplicas(w *worker, row []int8, maxR int) {
	rng := &w.rng
	perm := w.perm
	for i := range perm {
		perm[i] = i
	}
	for i := len(perm) - 1; i > 0; i-- {
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

// evaluate computes the two objectives (both minimised): minus the power
// mean of the jobs' speedups over their fair share, each discounted by the
// re-allocation factor when its allocation changes, and minus the cluster's
// utilisation over the vnodes in use. It reads only the repair's summary and
// the round's read-only data, so the workers run it.
func (g *gaState) evaluate(w *worker, in *indiv) {
	J, V := g.J, g.V
	sumP := 0.0
	p := g.p.opt.P
	if len(w.spd) < J {
		w.spd = make([]float64, J)
	}
	for j, st := range in.st {
		spd := g.jobs[j].speedup(&w.search, st.n, st.r)
		w.spd[j] = spd
		scaled := spd / g.total * float64(V)
		if st.diff {
			scaled *= g.jobs[j].factor
		}
		if p == -1 {
			sumP += 1 / (scaled + 1e-3)
		} else {
			sumP += math.Pow(scaled+1e-3, p)
		}
	}
	util := 0.0
	totalActive := float64(in.nActive * g.cap)
	if totalActive > 0 {
		for j, st := range in.st {
			if r := st.r; r > 0 {
				util += w.spd[j] / float64(r) * (float64(r) / totalActive)
			}
		}
	}
	mean := math.Pow(sumP/float64(J), 1/p)
	in.f = [2]float64{-mean, -util}
}
