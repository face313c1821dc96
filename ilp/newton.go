package ilp

import (
	"math"
	"time"
)

// The root's dual under a deadline: Newton's method on an entropic
// smoothing of the Lagrangian dual, with the smoothing's temperature
// lowered as it converges.
//
// The dual f(λ) = λ·cap + Σ_j max(0, max_o p_o − π_o·g_o) is convex and
// piecewise linear in the (#types + #quotas) multipliers: a cutting-plane
// method needs tens of evaluations over every job to come within 1e-4 of
// its minimum. Replacing each job's max by a log-sum-exp at temperature μ,
//
//	f_μ(λ) = λ·cap + Σ_j μ·log(1 + Σ_o exp((p_o − π_o·g_o)/μ)),
//
// gives a smooth convex function with f ≤ f_μ ≤ f + μ·Σ_j log(n_j), n_j
// the number of choices of job j within a few μ of its best (1 for all but
// the jobs nearly indifferent between two choices). Its gradient and
// Hessian are sums over the jobs (the expected rows a job uses under the
// softmax weights, and their covariance over μ), so one pass over the jobs
// gives the true dual value and subgradient (a valid bound) together with
// a Newton step of the smoothed one. Continuation from a large μ (many jobs
// near a tie: a well-conditioned Hessian) to a small one (close to f)
// reaches the dual's minimum to 1e-6 in about a dozen passes where the
// cutting-plane method needs fifty.

// smoothWindow is the number of temperatures below a job's best choice
// beyond which a choice's weight, exp(−smoothWindow), is left out.
const smoothWindow = 15

// smoothEval holds one pass's results and its scratch.
type smoothEval struct {
	n     int
	f     float64   // the dual at lam
	sg    []float64 // its subgradient: cap minus the rows the maximisers use
	fs    float64   // the smoothed dual at lam
	grad  []float64 // its gradient
	hess  []float64 // its Hessian, n×n row-major
	gk    []int32   // per group of the current job: the hull's maximiser
	gv    []float64 // and its Lagrangian profit
	gpi   []float64 // and the group's price
	mj    []float64 // per row: the current job's expected use (unnormalised)
	wg2   []float64 // per group of the current job: Σ w·g²
	wgs   []float64 // per group of the current job: Σ w·g
	touch []bool
	rows  []int32 // the rows the current job's choices use
	tied  int     // jobs with more than one choice in the window
}

// newSmoothEval returns the scratch of the passes over a model of n rows.
func newSmoothEval(n int) *smoothEval {
	return &smoothEval{n: n, sg: make([]float64, n), grad: make([]float64, n), hess: make([]float64, n*n), mj: make([]float64, n), touch: make([]bool, n)}
}

// eval makes one pass over jobs at lam and temperature mu. It reports
// false when stop (looked at every dualChunk jobs) interrupted it.
func (e *smoothEval) eval(m *model, jobs []int32, capv []int, lam []float64, mu float64, stop func() bool) bool {
	n := e.n
	e.f, e.fs = 0, 0
	for r := 0; r < n; r++ {
		c := float64(capv[r])
		e.sg[r], e.grad[r] = c, c
		e.f += lam[r] * c
	}
	e.fs = e.f
	e.tied = 0
	clear(e.hess)
	for x, ji := range jobs {
		if stop != nil && x%dualChunk == dualChunk-1 && stop() {
			return false
		}
		e.job(&m.jobs[ji], lam, mu)
	}
	return true
}

// job adds job j's terms to the pass.
func (e *smoothEval) job(j *mjob, lam []float64, mu float64) {
	ng := len(j.dual)
	if cap(e.gk) < ng {
		e.gk, e.gv, e.gpi = make([]int32, ng), make([]float64, ng), make([]float64, ng)
		e.wg2, e.wgs = make([]float64, ng), make([]float64, ng)
	}
	gk, gv, gpi := e.gk[:ng], e.gv[:ng], e.gpi[:ng]
	bv, bg := 0.0, -1
	for gi := range j.dual {
		d := &j.dual[gi]
		pi := j.groupPrice(gi, lam)
		k, v := d.argmax(j.pts, pi)
		gk[gi], gv[gi], gpi[gi] = int32(k), v, pi
		if k >= 0 && v > bv {
			bv, bg = v, gi
		}
	}
	// the true dual's term and subgradient (as dual)
	e.f += bv
	if bg >= 0 {
		d := &j.dual[bg]
		g := j.pts[2*(int(d.off)+int(gk[bg]))+1]
		for _, r := range j.groups[bg].rows {
			e.sg[r] -= g
		}
	}
	// the smoothed term: the choices within the window of the best
	thr := bv - smoothWindow*mu
	W := 0.0
	if thr <= 0 {
		W = math.Exp(-bv / mu) // staying unallocated
	}
	cnt := 0
	if W > 0 {
		cnt++
	}
	wg2, wgs := e.wg2[:ng], e.wgs[:ng]
	for gi := range j.dual {
		wg2[gi], wgs[gi] = 0, 0
		if gk[gi] < 0 || gv[gi] < thr {
			continue
		}
		d := &j.dual[gi]
		pts := j.pts[2*d.off : 2*(d.off+d.n)]
		pi := gpi[gi]
		add := func(k int) bool {
			v := pts[2*k] - pi*pts[2*k+1]
			if v < thr {
				return false
			}
			w := math.Exp((v - bv) / mu)
			g := pts[2*k+1]
			W += w
			wgs[gi] += w * g
			wg2[gi] += w * g * g
			cnt++
			return true
		}
		k0 := int(gk[gi])
		add(k0)
		for k := k0 - 1; k >= 0 && add(k); k-- {
		}
		for k := k0 + 1; k < int(d.n) && add(k); k++ {
		}
	}
	if cnt == 1 {
		// one choice, of weight exp(0) = 1: its value and rows, no
		// curvature
		e.fs += bv
		if bg >= 0 {
			d := &j.dual[bg]
			g := j.pts[2*(int(d.off)+int(gk[bg]))+1]
			for _, r := range j.groups[bg].rows {
				e.grad[r] -= g
			}
		}
		return
	}
	e.fs += bv + mu*math.Log(W)
	e.tied++
	// expected use m = Σ_o w_o a_o / W and covariance S/W − m·mᵀ over μ
	rows := e.rows[:0]
	for gi := range j.dual {
		if wgs[gi] == 0 {
			continue
		}
		for _, r := range j.groups[gi].rows {
			if !e.touch[r] {
				e.touch[r] = true
				rows = append(rows, r)
			}
			e.mj[r] += wgs[gi]
		}
	}
	n := e.n
	inv := 1 / W
	for gi := range j.dual {
		if wg2[gi] == 0 {
			continue
		}
		rs := j.groups[gi].rows
		c := wg2[gi] * inv / mu
		for _, r := range rs {
			for _, s := range rs {
				e.hess[int(r)*n+int(s)] += c
			}
		}
	}
	for _, r := range rows {
		mr := e.mj[r] * inv
		e.grad[r] -= mr
		for _, s := range rows {
			e.hess[int(r)*n+int(s)] -= mr * e.mj[s] * inv / mu
		}
	}
	for _, r := range rows {
		e.mj[r], e.touch[r] = 0, false
	}
	e.rows = rows
}

// newtonDual minimises the dual over λ in [0, ub] from lam0 (nil: 0) by
// smoothed Newton steps (see above), for at most maxPasses passes over the
// jobs or until stop (first, when non-nil, instead for the first pass); it
// returns the λ of the least true dual value seen and that value (ok false
// when the first pass was interrupted: there is then none).
func (m *model) newtonDual(jobs []int32, capv []int, lam0 []float64, maxPasses int, stop, first func() bool) (best []float64, fbest float64, ok bool) {
	return m.newtonDualAt(jobs, capv, lam0, maxPasses, newtonPassesAtMin, stop, first)
}

// newtonDualAt is newtonDual ending after atMin passes at the last
// temperature.
func (m *model) newtonDualAt(jobs []int32, capv []int, lam0 []float64, maxPasses, atMin int, stop, first func() bool) (best []float64, fbest float64, ok bool) {
	lam := m.boxed(lam0)
	mean := m.zeroDual(jobs) / float64(max(1, len(jobs)))
	if !(mean > 0) {
		return lam, m.zeroDual(jobs), false
	}
	mu := newtonMu0 * mean
	if lam0 == nil && len(jobs) >= newtonSampleMin {
		// the first, global steps from λ = 0 on a sample of the jobs
		// (see newtonSampled)
		if sl, ok := m.newtonSampled(jobs, capv, mean, maxPasses, stop); ok {
			lam, mu = sl, mu/newtonMuDrop
		}
	}
	return m.newtonRun(jobs, capv, lam, mu, newtonMuMin*mean, maxPasses, atMin, stop, first)
}

// newtonSampleMin is the number of jobs from which newtonDual takes its
// first steps on a sample of them: every newtonSampleStride-th job, with
// the capacities scaled to the sample's share. Far from the minimum a
// Newton step needs only the jobs' aggregate demand, which a sample of a
// quarter of thousands of jobs gives within a small fraction at a quarter
// of the cost; the sample's multipliers at the first temperature then
// start the passes over every job one temperature lower, so that the
// first of them, all a round short of time may get, start near the
// minimum. Only passes over every job give the bound.
//
// The sample's steps run at the first temperature, up to twice
// newtonPassesPerMu passes (a sample's pass costs a quarter of one over
// every job): over the corpus's eight rounds of 2,500 to 5,000 jobs, the
// passes ending at the first pass at the last temperature came within
// 1e-5 of the minimum after 42 passes over every job in all (and up to 16
// of the sample each), against 70 without the sample; on the 5,000-job
// rounds the first pass over every job is within 4.2e-4 and 1.6e-2 of
// the minimum, against 1.3e-1 and 7.6e-1 without it. (A sample at a higher
// temperature took fewer passes over every job, but its passes, with more
// choices in the window, cost more than they saved.)
const (
	newtonSampleMin    = 2000
	newtonSampleStride = 4
)

// newtonSampled returns the multipliers the smoothed steps reach at the
// first temperature (mean is the jobs' mean largest profit) on every
// newtonSampleStride-th job of jobs with the capacities scaled to the
// sample's share, or false when stop ended them before a pass.
func (m *model) newtonSampled(jobs []int32, capv []int, mean float64, maxPasses int, stop func() bool) ([]float64, bool) {
	sj := make([]int32, 0, len(jobs)/newtonSampleStride+1)
	for x := 0; x < len(jobs); x += newtonSampleStride {
		sj = append(sj, jobs[x])
	}
	share := float64(len(sj)) / float64(len(jobs))
	sc := make([]int, len(capv))
	for r, c := range capv {
		sc[r] = int(math.Round(float64(c) * share))
	}
	mu := newtonMu0 * mean
	lam, _, ok := m.newtonRun(sj, sc, m.boxed(nil), mu, mu, min(maxPasses, 2*newtonPassesPerMu), 2*newtonPassesPerMu, stop, stop)
	return lam, ok
}

// newtonRun is newtonDualAt's passes over jobs from lam, the temperature
// lowered from mu to muMin.
func (m *model) newtonRun(jobs []int32, capv []int, lam []float64, mu, muMin float64, maxPasses, atMin int, stop, first func() bool) (best []float64, fbest float64, ok bool) {
	n := m.nrows
	mean := m.zeroDual(jobs) / float64(max(1, len(jobs)))
	e := newSmoothEval(n)
	best, fbest = slices0(n), math.Inf(1)
	old := make([]float64, n)
	dir := make([]float64, n)
	fsOld := math.Inf(1)
	// step is the share of the Newton step taken: it shrinks fourfold
	// when a step raised the smoothed value (the quadratic model was
	// trusted too far: the step goes back to the previous point and
	// along the same direction again, shorter) and doubles after a full
	// one that did not
	step := 1.0
	atMu := 0
	for pass := 0; pass < maxPasses; pass++ {
		if pass > 0 && stop != nil && stop() {
			break
		}
		t0 := now()
		s := stop
		if pass == 0 && first != nil {
			s = first
		}
		if !e.eval(m, jobs, capv, lam, mu, s) {
			break
		}
		if newtonTrace != nil {
			newtonTrace(pass, mu/mean, e.f, now().Sub(t0))
		}
		ok = true
		if e.f < fbest {
			fbest = e.f
			copy(best, lam)
		}
		if e.fs > fsOld+1e-12*math.Abs(fsOld) && step > newtonMinStep {
			step /= 4
			for r := range lam {
				lam[r] = math.Min(math.Max(old[r]+step*dir[r], 0), m.ub[r])
			}
			continue
		}
		dec := e.newtonDir(m, lam, dir)
		atMu++
		// the last digits are not worth more passes (after atMin at the
		// last temperature when the last was the best yet: a pass that
		// overshot is followed by those that come back, up to
		// newtonPassesAtMin)
		if mu <= muMin && (atMu >= max(atMin, newtonPassesAtMin) || atMu >= atMin && e.f <= fbest) {
			break
		}
		if dec < newtonDecrement*mu*float64(max(1, e.tied)) || atMu >= newtonPassesPerMu {
			if mu <= muMin {
				break
			}
			mu = math.Max(mu/newtonMuDrop, muMin)
			atMu = 0
			fsOld = math.Inf(1) // another function: no comparison
		} else {
			fsOld = e.fs
		}
		copy(old, lam)
		step = math.Min(1, 2*step)
		for r := range lam {
			lam[r] = math.Min(math.Max(lam[r]+step*dir[r], 0), m.ub[r])
		}
	}
	return best, fbest, ok
}

// The continuation's constants: the first and last temperatures relative
// to the jobs' mean largest profit, the factor between two, and when a
// temperature is done (a Newton decrement below newtonDecrement times the
// temperature times the jobs near a tie, the scale of the smoothing's
// error, or newtonPassesPerMu passes; newtonPassesAtMin at the last).
const (
	newtonMu0Const    = 0.005
	newtonMuMin       = 1e-4
	newtonMuDrop      = 8
	newtonDecrement   = 0.1
	newtonPassesPerMu = 8
	newtonPassesAtMin = 3
	newtonMinStep     = 1.0 / 256
)

// newtonPolished is newtonDual from λ = 0 followed, when polish is set and
// stop allows it, by the cutting-plane method from its multipliers (with
// the accuracy tol and a stall test): on a few jobs, a dual with few and
// sharp kinks, the smoothed steps can stall above the minimum. Without
// polish (a deadline that leaves no time for more than the greedy
// incumbents) the smoothed steps end after their first pass at the last
// temperature: on the 5,000-job quota round of the hard corpus that pass
// is within 1.9e-5 of the minimum, and the next four, 1.5-2.5 ms each,
// overshot (2.8e-3) and came back to 1.5e-5.
func (m *model) newtonPolished(jobs []int32, capv []int, maxPasses int, tol float64, stop, first func() bool, polish bool) (lam []float64, f float64, ok bool) {
	atMin := newtonPassesAtMin
	if !polish {
		atMin = 1
	}
	lam, f, ok = m.newtonDualAt(jobs, capv, nil, maxPasses, atMin, stop, first)
	trace("newtonDual")
	if ok && polish && (stop == nil || !stop()) {
		if pl, pf := m.minimizeDualFirst(jobs, capv, lam, tol, maxPasses, stop, stop, newtonPolishStall); pf < f {
			lam, f = pl, pf
		}
	}
	return lam, f, ok
}

// newtonPolishStall is the stall test (see minimizeDualFirst) of the
// cutting-plane method that polishes newtonDual's multipliers when the
// deadline leaves time for it.
const newtonPolishStall = 1e-7

var newtonTrace func(pass int, mu, f float64, d time.Duration)

func slices0(n int) []float64 { return make([]float64, n) }

// newtonDir sets dir to the projected Newton step of the smoothed dual at
// lam (rows at a bound of [0, ub] whose gradient pushes them out stay
// there) and returns the Newton decrement's half, −grad·dir/2, an estimate
// of the smoothed value's excess over its minimum.
func (e *smoothEval) newtonDir(m *model, lam, dir []float64) float64 {
	n := e.n
	var free []int
	for r := 0; r < n; r++ {
		dir[r] = 0
		g := e.grad[r]
		if m.ub[r] <= 0 || lam[r] <= 0 && g > 0 || lam[r] >= m.ub[r] && g < 0 {
			continue
		}
		free = append(free, r)
	}
	k := len(free)
	if k == 0 {
		return 0
	}
	A := make([]float64, k*k)
	b := make([]float64, k)
	diag := 0.0
	for a, r := range free {
		b[a] = -e.grad[r]
		for c, s := range free {
			A[a*k+c] = e.hess[r*n+s]
		}
		diag = math.Max(diag, A[a*k+a])
	}
	reg := 1e-9*diag + 1e-300
	for a := range free {
		A[a*k+a] += reg
	}
	x, ok := cholSolve(A, b, k)
	if !ok {
		return 0
	}
	dec := 0.0
	for a, r := range free {
		// a trust region: a row whose curvature is near 0 would jump
		lim := math.Max(lam[r], m.ub[r]/16)
		d := math.Max(-lim, math.Min(lim, x[a]))
		dir[r] = d
		dec -= e.grad[r] * d
	}
	return dec / 2
}

// cholSolve solves A·x = b for a symmetric positive definite k×k A
// (row-major, overwritten), reporting false when A is not.
func cholSolve(A, b []float64, k int) ([]float64, bool) {
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			s := A[i*k+j]
			for l := 0; l < j; l++ {
				s -= A[i*k+l] * A[j*k+l]
			}
			if i == j {
				if !(s > 0) {
					return nil, false
				}
				A[i*k+i] = math.Sqrt(s)
			} else {
				A[i*k+j] = s / A[j*k+j]
			}
		}
	}
	x := append([]float64(nil), b...)
	for i := 0; i < k; i++ {
		s := x[i]
		for l := 0; l < i; l++ {
			s -= A[i*k+l] * x[l]
		}
		x[i] = s / A[i*k+i]
	}
	for i := k - 1; i >= 0; i-- {
		s := x[i]
		for l := i + 1; l < k; l++ {
			s -= A[l*k+i] * x[l]
		}
		x[i] = s / A[i*k+i]
	}
	return x, true
}

// newtonMu0 is newtonMu0Const (the tests vary it).
var newtonMu0 = newtonMu0Const
