package goodput

import "math"

// The batch-size search (Model.Best): one implementation, Searcher.best,
// over two shared helpers, batchGrid (the candidate global batches) and
// SplitBatch (a global batch as per-GPU batch and accumulation steps).
// goodput's tests check it against a plain loop over every candidate.

// batchGrid returns the n-point geometric grid of global batches from lo
// to hi (numpy.geomspace: the end points exact), appended to dst.
func batchGrid(dst []float64, lo, hi float64, n int) []float64 {
	if n == 1 {
		return append(dst, hi)
	}
	logLo := math.Log(lo)
	step := (math.Log(hi) - logLo) / float64(n-1)
	for i := 0; i < n; i++ {
		switch {
		case i == 0:
			dst = append(dst, lo)
		case i == n-1:
			dst = append(dst, hi)
		default:
			dst = append(dst, math.Exp(logLo+float64(i)*step))
		}
	}
	return dst
}

// split rounds a global batch over replicas: the fewest accumulation steps
// (at least minAccum) whose per-GPU batch fits maxLocal, and the per-GPU
// batch rounded up (the 1e-8 absorbs the grid's rounding, as in the
// published artifact).
func split(global float64, replicas, maxLocal, minAccum int) (local, accum int) {
	per := global / float64(replicas)
	accum = max(int(math.Ceil(per/float64(maxLocal)-1e-8))-1, minAccum, 0)
	return int(math.Ceil(per/float64(accum+1) - 1e-8)), accum
}

// SplitBatch splits a global batch over replicas data-parallel replicas:
// the fewest accumulation steps whose per-GPU batch is at most maxLocal, and
// the per-GPU batch rounded up (so replicas·local·(accum+1) ≥ global). It is
// the rounding rule of Model.Best, for a host (or a scheduler) that fixes
// the global batch itself. It returns (1, 0) for global, replicas or
// maxLocal below 1.
func SplitBatch(global, replicas, maxLocal int) (local, accum int) {
	if global < 1 || replicas < 1 || maxLocal < 1 {
		return 1, 0
	}
	local, accum = split(float64(global), replicas, maxLocal, 0)
	return max(local, 1), accum
}

// candidate is one batch size of the search: its place in the grid, its
// split and the upper bound of its goodput.
type candidate struct {
	local, accum int
	bound        float64
}

// gridKey identifies a geometric batch grid (lo, hi) of GridPoints points.
type gridKey struct{ lo, hi float64 }

// Searcher runs Model.Best's batch-size search with caches that pay off
// over many calls (the grids and the tangents of the overlap norm, per
// round of a scheduler): the result is exactly Model.Best's. The zero value
// is ready to use. A Searcher is not safe for concurrent use.
type Searcher struct {
	grids map[gridKey][]float64
	lines map[float64]*[nLines][2]float64
}

// Best returns m.Best(nodes, replicas) for a model the caller has
// validated (Model.Validate); an invalid model gives an unspecified result
// (never a panic).
func (s *Searcher) Best(m *Model, nodes, replicas int) (Choice, bool) {
	if !m.covers(nodes, replicas) {
		return Choice{}, false
	}
	if m.Hybrid() {
		return m.bestHybrid(nodes, replicas)
	}
	return s.best(m, nodes, replicas)
}

// grid returns the candidate global batches between lo and hi (cached).
func (s *Searcher) grid(lo, hi float64, n int) []float64 {
	k := gridKey{lo, hi}
	if g, ok := s.grids[k]; ok {
		return g
	}
	g := batchGrid(make([]float64, 0, n), lo, hi, n)
	if s.grids == nil {
		s.grids = make(map[gridKey][]float64, 16)
	}
	s.grids[k] = g
	return g
}

// nLines is the number of tangents of f(t) = (1 + t^γ)^(1/γ) on [0, 1] used
// to bound the synchronisation time from below.
const nLines = 5

// tangentLogs are ln t of the tangent points t = 1 (and 0.2, 0.4, 0.6, 0.8).
var tangentLogs = [nLines]float64{0, math.Log(0.2), math.Log(0.4), math.Log(0.6), math.Log(0.8)}

// tangents returns lines (a, b) with f(t) ≥ a + b·t on [0, 1]: f is convex,
// so each tangent lies below it; together they bound it tightly.
func (s *Searcher) tangents(gamma float64) *[nLines][2]float64 {
	if l, ok := s.lines[gamma]; ok {
		return l
	}
	l := new([nLines][2]float64)
	for k := 0; k < nLines; k++ {
		t := math.Exp(tangentLogs[k])
		tg := math.Exp(gamma * tangentLogs[k]) // t^γ
		f := math.Exp(math.Log1p(tg) / gamma)  // (1 + t^γ)^(1/γ)
		d := tg / t * f / (1 + tg)             // f'(t) = t^(γ−1)·(1+t^γ)^(1/γ−1)
		l[k] = [2]float64{f - d*t, d}
	}
	if s.lines == nil {
		s.lines = make(map[float64]*[nLines][2]float64, 64)
	}
	s.lines[gamma] = l
	return l
}

// syncLow is a lower bound of T_sync = pnorm(a, b, γ): hi·f(t) with
// t = lo/hi, f(t) ≥ 1 and f above its tangents.
func syncLow(a, b float64, l *[nLines][2]float64) float64 {
	hi, lo := a, b
	if lo > hi {
		hi, lo = lo, hi
	}
	if !(hi > 0) {
		return 0
	}
	t := lo / hi
	best := 1.0
	if t > 0.05 { // below, the tangents add little to f(t) ≥ 1
		for k := 0; k < nLines; k++ {
			if v := l[k][0] + l[k][1]*t; v > best {
				best = v
			}
		}
	}
	return hi * best
}

// best is the data-parallel search: it enumerates the candidate batches,
// bounds each candidate's goodput from above without the costly overlap
// power (T_sync ≥ max(T_acc, T_net), tangents of the convex p-norm), and
// evaluates exactly only the candidates whose bound can still beat the best
// so far; the first candidate with the highest goodput wins.
func (s *Searcher) best(m *Model, nodes, replicas int) (Choice, bool) {
	lo, hi, fixed := m.batchRange(replicas)
	if lo > hi {
		return Choice{}, false
	}
	n := GridPoints
	if fixed || lo == hi {
		n = 1
	}
	var cands [GridPoints]candidate
	one := [1]float64{hi}
	batches := one[:]
	if n > 1 {
		batches = s.grid(lo, hi, n)
	}
	nc := s.candidates(m, nodes, replicas, batches, &cands)
	if nc == 0 {
		return Choice{}, false
	}
	return bestCandidate(m, nodes, replicas, cands[:n])
}

// candidates splits each grid batch (rejecting those whose per-GPU batch
// leaves the limits: bound −1) and bounds its goodput; it returns the
// number of feasible candidates.
func (s *Searcher) candidates(m *Model, nodes, replicas int, batches []float64, out *[GridPoints]candidate) int {
	bmin, bmax := m.Limits.MinLocalBatch, m.Limits.MaxLocalBatch
	m0 := float64(m.InitBatch)
	tnet := m.Params.NetTime(nodes, replicas)
	var lines *[nLines][2]float64
	if len(batches) > 1 {
		lines = s.tangents(m.Params.Gamma)
	}
	sqr := m.Grad.Sqr
	effNum := (m.Grad.Var + sqr) * m0 // E(M) = effNum / (effDen + sqr·M)
	effDen := m.Grad.Var * m0
	nc := 0
	for i, batch := range batches {
		// A single GPU over M0 accumulates at least two micro-batches
		// (needed to measure gradient statistics).
		minAccum := 0
		if replicas == 1 && batch > m0+1e-8 {
			minAccum = 1
		}
		b, acc := split(batch, replicas, bmax, minAccum)
		c := &out[i]
		*c = candidate{local: b, accum: acc, bound: -1}
		if b < bmin || b > bmax {
			continue
		}
		nc++
		if lines == nil {
			c.bound = math.Inf(1) // one candidate: evaluated anyway
			continue
		}
		tacc := m.Params.AccumTime(float64(b))
		low := float64(acc)*tacc + syncLow(tacc, tnet, lines)
		// goodput = global/T_iter · E(global): one division instead of
		// goodput's four; the slack absorbs the different rounding.
		g := float64(replicas * b * (acc + 1))
		if den := effDen + sqr*g; den > 0 {
			c.bound = g * effNum / (low * den) * (1 + 1e-6)
		} else {
			c.bound = m0 / low * (1 + 1e-6)
		}
		if !(c.bound >= 0) { // NaN: evaluate exactly
			c.bound = math.Inf(1)
		}
	}
	return nc
}

// bestCandidate evaluates the candidates by decreasing promise, skipping
// those whose bound is below the best so far. Candidates before the winner
// that were pruned have a bound below it, so they cannot tie. A NaN
// goodput never wins, except as the very first feasible candidate: then
// every candidate is evaluated in order.
func bestCandidate(m *Model, nodes, replicas int, cands []candidate) (Choice, bool) {
	top := -1
	for i := range cands {
		if cands[i].bound >= 0 && (top < 0 || cands[i].bound > cands[top].bound) {
			top = i
		}
	}
	best := m.Evaluate(nodes, replicas, cands[top].local, cands[top].accum)
	bestIdx := top
	for i := range cands {
		c := &cands[i]
		if i == top || c.bound < 0 || c.bound < best.Goodput {
			continue
		}
		ch := m.Evaluate(nodes, replicas, c.local, c.accum)
		if ch.Goodput > best.Goodput || (ch.Goodput == best.Goodput && i < bestIdx) {
			best, bestIdx = ch, i
		}
	}
	if !math.IsNaN(best.Goodput) {
		return best, true
	}
	found := false
	for i := range cands {
		c := &cands[i]
		if c.bound < 0 {
			continue
		}
		ch := m.Evaluate(nodes, replicas, c.local, c.accum)
		if !found || ch.Goodput > best.Goodput {
			best, found = ch, true
		}
	}
	return best, found
}
