package sia

import (
	"math"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/goodput"
)

// gridKey identifies a geometric batch grid (lo, hi) of goodput.GridPoints
// points.
type gridKey struct{ lo, hi float64 }

// evaluator computes goodput.Model.Best faster, with the same result: it
// enumerates the same candidate batch sizes (the grids are cached per round,
// so the exponentials are computed once per (lo, hi)), bounds each
// candidate's goodput from above without the costly overlap power
// (T_sync ≥ max(T_acc, T_net) with tangents of the convex p-norm (T_sync = hi·f(lo/hi), f(t) = (1 + t^γ)^(1/γ)), and evaluates exactly (with
// goodput.Model.Evaluate) only the candidates whose bound can still beat the
// best so far. TestFastBestMatchesBest checks it against Best, its naive
// twin.
type evaluator struct {
	grids map[gridKey][]float64
	lines map[float64]*[nLines][2]float64
	cands []configset.Config // scratch for BuildMatrix
}

func newEvaluator() *evaluator {
	return &evaluator{grids: make(map[gridKey][]float64, 16), lines: make(map[float64]*[nLines][2]float64, 64)}
}

// nLines is the number of tangents of f(t) = (1 + t^γ)^(1/γ) on [0, 1] used
// to bound the synchronisation time from below.
const nLines = 5

// tangentLogs are ln t of the tangent points t = 0.2, 0.4, 0.6, 0.8 (and 1).
var tangentLogs = [nLines]float64{0, math.Log(0.2), math.Log(0.4), math.Log(0.6), math.Log(0.8)}

// tangents returns lines (a, b) with f(t) ≥ a + b·t on [0, 1]: f is convex,
// so each tangent lies below it; together they bound it tightly. Line 0 is
// the tangent at t = 1.
func (ev *evaluator) tangents(gamma float64) *[nLines][2]float64 {
	if l, ok := ev.lines[gamma]; ok {
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
	ev.lines[gamma] = l
	return l
}

// syncLow is a lower bound of goodput's T_sync = pnorm(a, b, γ): hi·f(t)
// with t = lo/hi, f(t) ≥ 1 and f above its tangents.
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

// grid returns the candidate global batches between lo and hi, exactly as
// goodput.Model.Best computes them.
func (ev *evaluator) grid(lo, hi float64) []float64 {
	k := gridKey{lo, hi}
	if g, ok := ev.grids[k]; ok {
		return g
	}
	n := goodput.GridPoints
	logLo, step := math.Log(lo), 0.0
	if n > 1 {
		step = (math.Log(hi) - logLo) / float64(n-1)
	}
	g := make([]float64, n)
	for i := range g {
		switch {
		case i == 0:
			g[i] = lo
		case i == n-1:
			g[i] = hi
		default:
			g[i] = math.Exp(logLo + float64(i)*step)
		}
	}
	ev.grids[k] = g
	return g
}

// best returns m.Best(nodes, replicas) for a model that has already been
// validated.
func (ev *evaluator) best(m *goodput.Model, nodes, replicas int) (goodput.Choice, bool) {
	if nodes < 1 || replicas < nodes {
		return goodput.Choice{}, false
	}
	if m.Hybrid() || m.FixedBatch {
		return m.Best(nodes, replicas)
	}
	bmin, bmax := m.Limits.MinLocalBatch, m.Limits.MaxLocalBatch
	lo := math.Max(float64(m.InitBatch), float64(bmin)*float64(replicas))
	hi := float64(m.MaxBatch)
	if lo > hi {
		return goodput.Choice{}, false
	}
	if lo == hi {
		return m.Best(nodes, replicas)
	}
	batches := ev.grid(lo, hi)
	r := float64(replicas)
	m0 := float64(m.InitBatch)
	tnet := m.Params.NetTime(nodes, replicas)
	lines := ev.tangents(m.Params.Gamma)
	sqr := m.Grad.Sqr
	effNum := (m.Grad.Var + sqr) * m0 // E(M) = effNum / (effDen + sqr·M)
	effDen := m.Grad.Var * m0
	var (
		bs, ss [goodput.GridPoints]int
		ub     [goodput.GridPoints]float64
		done   [goodput.GridPoints]bool
	)
	top, nc := -1, 0
	for i, batch := range batches {
		local := batch / r
		s := int(math.Ceil(local/float64(bmax)-1e-8)) - 1
		if s < 0 {
			s = 0
		}
		if replicas == 1 && local > m0+1e-8 && s < 1 {
			s = 1
		}
		b := int(math.Ceil(local/float64(s+1) - 1e-8))
		if b < bmin || b > bmax {
			ub[i] = -1
			continue
		}
		bs[i], ss[i] = b, s
		tacc := m.Params.AccumTime(float64(b))
		low := float64(s)*tacc + syncLow(tacc, tnet, lines)
		// goodput = global/T_iter · E(global), with
		// E(M) = (var+sqr)·M0 / (var·M0 + sqr·M) (or M0/M without
		// statistics): one division instead of goodput's four; the slack
		// absorbs the different rounding.
		g := float64(replicas * b * (s + 1))
		if den := effDen + sqr*g; den > 0 {
			ub[i] = g * effNum / (low * den) * (1 + 1e-6)
		} else {
			ub[i] = m0 / low * (1 + 1e-6)
		}
		if !(ub[i] >= 0) { // NaN: evaluate exactly
			ub[i] = math.Inf(1)
		}
		nc++
		if top < 0 || ub[i] > ub[top] {
			top = i
		}
	}
	if nc == 0 {
		return goodput.Choice{}, false
	}
	best := m.Evaluate(nodes, replicas, bs[top], ss[top])
	bestIdx := top
	done[top] = true
	for i := range batches {
		if done[i] || ub[i] < 0 || ub[i] < best.Goodput {
			continue
		}
		c := m.Evaluate(nodes, replicas, bs[i], ss[i])
		if c.Goodput > best.Goodput || (c.Goodput == best.Goodput && i < bestIdx) {
			best, bestIdx = c, i
		}
	}
	// Best keeps the first candidate with the highest goodput; candidates
	// before bestIdx that were pruned have a bound below it, so they cannot
	// tie. NaN goodputs never win in Best either (comparisons are false),
	// except as the very first feasible candidate.
	if math.IsNaN(best.Goodput) {
		return m.Best(nodes, replicas)
	}
	return best, true
}
