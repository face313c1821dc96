package goodput

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/optimize"
)

// Observation is one measured throughput sample of a job on one GPU type:
// Replicas data-parallel replicas over Nodes nodes with LocalBatch samples per
// GPU took StepTime seconds per optimizer step (no accumulation), of which
// SyncTime seconds were spent in the gradient all-reduce.
type Observation struct {
	Nodes, Replicas, LocalBatch int
	StepTime, SyncTime          float64
}

// ObservationError reports an unusable observation passed to Fit or Loss.
// It wraps ErrInvalidInput.
type ObservationError struct {
	// Index is the position of the observation in the slice.
	Index int
	// Field names the offending field of Observation.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *ObservationError) Error() string {
	return fmt.Sprintf("goodput: observation %d: %s: %s", e.Index, e.Field, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *ObservationError) Unwrap() error { return ErrInvalidInput }

// FitOptions tune Fit. A nil *FitOptions means the defaults.
type FitOptions struct {
	// Starts is the number of starting points tried; the best local optimum
	// wins. 0 means DefaultStarts; 1 means only the published artifact's
	// starting point (0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001). Further
	// starts are derived from the data (least-squares estimates of the
	// compute and network lines) with different overlap exponents γ.
	Starts int
	// MaxIterations caps the quasi-Newton iterations per starting point.
	// 0 means 300.
	MaxIterations int
	// Init, if not nil, is tried as an additional starting point (for
	// example the previous fit when new observations arrive). Its pinned
	// components are ignored.
	Init *Params
}

// DefaultStarts is the number of starting points Fit tries by default.
const DefaultStarts = 4

const defaultMaxIterations = 300

// Param indices in the full 7-vector.
const (
	iAlphaC = iota
	iBetaC
	iAlphaN
	iBetaN
	iAlphaR
	iBetaR
	iGamma
	nParams
)

func (p Params) vec() [nParams]float64 {
	return [nParams]float64{p.AlphaC, p.BetaC, p.AlphaN, p.BetaN, p.AlphaR, p.BetaR, p.Gamma}
}

func fromVec(v [nParams]float64) Params {
	return Params{AlphaC: v[iAlphaC], BetaC: v[iBetaC], AlphaN: v[iAlphaN], BetaN: v[iBetaN], AlphaR: v[iAlphaR], BetaR: v[iBetaR], Gamma: v[iGamma]}
}

// accGroup aggregates observations with the same local batch: their summed
// squared log-error is count·(log T_acc(b) − mean)² plus a constant.
type accGroup struct {
	b, count, mean float64
}

// syncGroup aggregates observations with the same network kind, replica count
// and local batch, which together determine the predicted optimizer-step time.
type syncGroup struct {
	kind        int // 0: one replica, 1: several replicas on one node, 2: several nodes
	x, b        float64
	count, mean float64
}

// line accumulates a least-squares fit y ≈ a + b·x.
type line struct{ n, sx, sy, sxx, sxy float64 }

func (l *line) add(x, y float64) {
	l.n++
	l.sx += x
	l.sy += y
	l.sxx += x * x
	l.sxy += x * y
}

// fit returns intercept and slope, both at least floor; with no spread in x
// the slope is floor and the intercept the mean.
func (l *line) fit(floor float64) (a, b float64) {
	if l.n == 0 {
		return floor, floor
	}
	den := l.n*l.sxx - l.sx*l.sx
	if den > 1e-12*l.n*l.sxx {
		b = (l.n*l.sxy - l.sx*l.sy) / den
		a = (l.sy - b*l.sx) / l.n
	} else {
		a, b = l.sy/l.n, 0
	}
	mean := l.sy / l.n
	if b <= 0 {
		b = floor
		a = mean
	}
	if a <= 0 {
		a = math.Max(1e-3*mean, floor)
	}
	return a, math.Max(b, floor)
}

// fitData is the aggregated form of a set of observations.
type fitData struct {
	n              float64
	acc            []accGroup
	sync           []syncGroup
	accSS, syncSS  float64 // within-group squared deviations (loss constants)
	meanAccum      float64
	accLine        line
	netLine        [3]line // by kind
	distinctB      bool
	multiNode      bool
	intraNode      bool
	replicasAbove2 bool
}

func checkObservations(obs []Observation) error {
	if len(obs) == 0 {
		return fmt.Errorf("%w: no observations", ErrInvalidInput)
	}
	for i, o := range obs {
		switch {
		case o.Nodes < 1:
			return &ObservationError{i, "Nodes", fmt.Sprintf("%d, want >= 1", o.Nodes)}
		case o.Replicas < o.Nodes:
			return &ObservationError{i, "Replicas", fmt.Sprintf("%d, want >= Nodes = %d", o.Replicas, o.Nodes)}
		case o.LocalBatch < 1:
			return &ObservationError{i, "LocalBatch", fmt.Sprintf("%d, want >= 1", o.LocalBatch)}
		case !(o.StepTime > 0) || math.IsInf(o.StepTime, 0):
			return &ObservationError{i, "StepTime", fmt.Sprintf("%v, want a finite value > 0", o.StepTime)}
		case !(o.SyncTime >= 0) || math.IsInf(o.SyncTime, 0):
			return &ObservationError{i, "SyncTime", fmt.Sprintf("%v, want a finite value >= 0", o.SyncTime)}
		case !(o.SyncTime < o.StepTime):
			return &ObservationError{i, "SyncTime", fmt.Sprintf("%v is not below StepTime %v (the accumulation time StepTime−SyncTime must be positive)", o.SyncTime, o.StepTime)}
		}
	}
	return nil
}

func kindOf(nodes, replicas int) int {
	switch {
	case nodes > 1:
		return 2
	case replicas > 1:
		return 1
	default:
		return 0
	}
}

// newFitData aggregates valid observations. Groups are sorted so that the
// result (and so the fit) does not depend on the order of obs.
func newFitData(in []Observation) *fitData {
	obs := sortedObservations(in)
	d := &fitData{n: float64(len(obs))}
	type skey struct{ kind, r, b int }
	accIdx := map[int]int{}
	syncIdx := map[skey]int{}
	accOf := make([]int, len(obs))
	syncOf := make([]int, len(obs))
	var accKeys []int
	var syncKeys []skey
	sumAccum := 0.0
	for _, o := range obs {
		accum := o.StepTime - o.SyncTime
		sumAccum += accum
		if o.LocalBatch != obs[0].LocalBatch {
			d.distinctB = true
		}
		kind := kindOf(o.Nodes, o.Replicas)
		switch kind {
		case 2:
			d.multiNode = true
		case 1:
			d.intraNode = true
		}
		if o.Replicas > 2 {
			d.replicasAbove2 = true
		}
		if _, ok := accIdx[o.LocalBatch]; !ok {
			accIdx[o.LocalBatch] = 0
			accKeys = append(accKeys, o.LocalBatch)
		}
		r := o.Replicas
		if kind == 0 {
			r = 1
		}
		k := skey{kind, r, o.LocalBatch}
		if _, ok := syncIdx[k]; !ok {
			syncIdx[k] = 0
			syncKeys = append(syncKeys, k)
		}
	}
	sort.Ints(accKeys)
	sort.Slice(syncKeys, func(a, b int) bool {
		ka, kb := syncKeys[a], syncKeys[b]
		if ka.kind != kb.kind {
			return ka.kind < kb.kind
		}
		if ka.r != kb.r {
			return ka.r < kb.r
		}
		return ka.b < kb.b
	})
	d.acc = make([]accGroup, len(accKeys))
	for i, b := range accKeys {
		accIdx[b] = i
		d.acc[i].b = float64(b)
	}
	d.sync = make([]syncGroup, len(syncKeys))
	for i, k := range syncKeys {
		syncIdx[k] = i
		d.sync[i] = syncGroup{kind: k.kind, x: math.Max(float64(k.r-2), Epsilon), b: float64(k.b)}
	}
	// First pass: group means. Second pass: within-group deviations.
	for i, o := range obs {
		kind := kindOf(o.Nodes, o.Replicas)
		r := o.Replicas
		if kind == 0 {
			r = 1
		}
		accOf[i] = accIdx[o.LocalBatch]
		syncOf[i] = syncIdx[skey{kind, r, o.LocalBatch}]
		g, h := &d.acc[accOf[i]], &d.sync[syncOf[i]]
		g.count++
		g.mean += math.Log(o.StepTime - o.SyncTime)
		h.count++
		h.mean += math.Log(o.StepTime)
		d.accLine.add(float64(o.LocalBatch), o.StepTime-o.SyncTime)
		if kind > 0 {
			d.netLine[kind].add(math.Max(float64(o.Replicas-2), Epsilon), o.SyncTime)
		}
	}
	for i := range d.acc {
		d.acc[i].mean /= d.acc[i].count
	}
	for i := range d.sync {
		d.sync[i].mean /= d.sync[i].count
	}
	for i, o := range obs {
		ea := math.Log(o.StepTime-o.SyncTime) - d.acc[accOf[i]].mean
		es := math.Log(o.StepTime) - d.sync[syncOf[i]].mean
		d.accSS += ea * ea
		d.syncSS += es * es
	}
	d.meanAccum = sumAccum / d.n
	return d
}

// sortedObservations returns a sorted copy of obs, so that floating-point
// sums do not depend on the caller's order.
func sortedObservations(in []Observation) []Observation {
	obs := append([]Observation(nil), in...)
	sort.Slice(obs, func(i, j int) bool {
		a, b := obs[i], obs[j]
		switch {
		case a.Nodes != b.Nodes:
			return a.Nodes < b.Nodes
		case a.Replicas != b.Replicas:
			return a.Replicas < b.Replicas
		case a.LocalBatch != b.LocalBatch:
			return a.LocalBatch < b.LocalBatch
		case a.StepTime != b.StepTime:
			return a.StepTime < b.StepTime
		default:
			return a.SyncTime < b.SyncTime
		}
	})
	return obs
}

// pinned returns the parameters the data cannot identify, with their fixed
// values (design.md §3): one distinct local batch → AlphaC = mean
// accumulation time / 2; no multi-node data → AlphaN = BetaN = ε; no
// single-node multi-GPU data → AlphaR = BetaR = ε; no observation with more
// than two replicas → BetaN = BetaR = ε.
func (d *fitData) pinned() (pin [nParams]bool, val [nParams]float64) {
	if !d.distinctB {
		pin[iAlphaC], val[iAlphaC] = true, d.meanAccum/2
	}
	if !d.multiNode {
		pin[iAlphaN], val[iAlphaN] = true, Epsilon
		pin[iBetaN], val[iBetaN] = true, Epsilon
	}
	if !d.intraNode {
		pin[iAlphaR], val[iAlphaR] = true, Epsilon
		pin[iBetaR], val[iBetaR] = true, Epsilon
	}
	if !d.replicasAbove2 {
		pin[iBetaN], val[iBetaN] = true, Epsilon
		pin[iBetaR], val[iBetaR] = true, Epsilon
	}
	return pin, val
}

// Loss weights of the regularisers (design.md §3).
const (
	gammaPenalty = 1e-3
	ratioPenalty = 1e-2
)

// loss evaluates the fitting objective at full parameter vector p and, if
// grad is not nil, its gradient with respect to p:
//
//	RMSE(log T_acc) + RMSE(log T_sync) + 1e-3(γ−1)² + 1e-2((βn/αn)² + (βr/αr)²)
//
// With delta > 0 each RMSE term r is replaced by sqrt(r² + delta²) − delta,
// which is smooth where a term reaches zero (noise-free data); delta = 0 is
// the exact loss.
func (d *fitData) loss(p *[nParams]float64, grad *[nParams]float64, delta float64) float64 {
	ac, bc, g := p[iAlphaC], p[iBetaC], p[iGamma]
	var ga [nParams]float64 // gradient of the accumulation squared-error sum
	var gs [nParams]float64 // gradient of the sync squared-error sum
	sa := d.accSS
	for _, q := range d.acc {
		a := ac + bc*q.b
		e := math.Log(a) - q.mean
		sa += q.count * e * e
		if grad != nil {
			k := 2 * q.count * e / a
			ga[iAlphaC] += k
			ga[iBetaC] += k * q.b
		}
	}
	ss := d.syncSS
	for _, q := range d.sync {
		a := ac + bc*q.b
		var alpha, beta int
		switch q.kind {
		case 2:
			alpha, beta = iAlphaN, iBetaN
		case 1:
			alpha, beta = iAlphaR, iBetaR
		}
		var t float64
		if q.kind == 0 {
			t = Epsilon + Epsilon*q.x
		} else {
			t = p[alpha] + p[beta]*q.x
		}
		la, lt := math.Log(a), math.Log(t)
		// log T = log max + log1p(exp(γ·(log min − log max)))/γ
		var lhi, d0 float64
		aIsHi := la >= lt
		if aIsHi {
			lhi, d0 = la, lt-la
		} else {
			lhi, d0 = lt, la-lt
		}
		pw := math.Exp(g * d0) // (min/max)^γ in (0, 1]
		l1 := math.Log1p(pw)
		lT := lhi + l1/g
		e := lT - q.mean
		ss += q.count * e * e
		if grad == nil {
			continue
		}
		k := 2 * q.count * e
		wLo := pw / (1 + pw) // weight of the smaller term
		wHi := 1 / (1 + pw)
		wa, wt := wHi, wLo
		if !aIsHi {
			wa, wt = wLo, wHi
		}
		gs[iAlphaC] += k * wa / a
		gs[iBetaC] += k * wa * q.b / a
		if q.kind != 0 {
			gs[alpha] += k * wt / t
			gs[beta] += k * wt * q.x / t
		}
		// d logT/dγ = −log1p(pw)/γ² + wLo·d0/γ
		gs[iGamma] += k * (-l1/(g*g) + wLo*d0/g)
	}
	const tiny = 1e-300
	d2 := delta * delta
	ra := math.Sqrt(sa/d.n + d2)
	rs := math.Sqrt(ss/d.n + d2)
	rn := p[iBetaN] / p[iAlphaN]
	rr := p[iBetaR] / p[iAlphaR]
	f := ra + rs - 2*delta + gammaPenalty*(g-1)*(g-1) + ratioPenalty*(rn*rn+rr*rr)
	if grad != nil {
		ca := 1 / (2 * d.n * math.Max(ra, tiny))
		cs := 1 / (2 * d.n * math.Max(rs, tiny))
		for i := range grad {
			grad[i] = ca*ga[i] + cs*gs[i]
		}
		grad[iGamma] += 2 * gammaPenalty * (g - 1)
		grad[iBetaN] += 2 * ratioPenalty * rn / p[iAlphaN]
		grad[iAlphaN] -= 2 * ratioPenalty * rn * rn / p[iAlphaN]
		grad[iBetaR] += 2 * ratioPenalty * rr / p[iAlphaR]
		grad[iAlphaR] -= 2 * ratioPenalty * rr * rr / p[iAlphaR]
	}
	return f
}

// Loss returns the fitting objective of design.md §3 for parameters p on
// observations obs:
//
//	RMSE(log T_acc) + RMSE(log T_sync) + 1e-3(γ−1)² + 1e-2((βn/αn)² + (βr/αr)²)
//
// where T_acc is compared with StepTime − SyncTime and T_sync with StepTime.
// Fit minimises it; it is exported to compare fits.
func Loss(obs []Observation, p Params) (float64, error) {
	if err := checkObservations(obs); err != nil {
		return 0, err
	}
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if p.AlphaN <= 0 || p.AlphaR <= 0 {
		return 0, fmt.Errorf("%w: Params.AlphaN and Params.AlphaR must be > 0 for the loss (it divides by them)", ErrInvalidInput)
	}
	v := p.vec()
	return newFitData(obs).loss(&v, nil, 0), nil
}

// objective maps the unconstrained optimisation vector x (free parameters
// only) to the full parameter vector: time parameters are ε + exp(x_i), so
// they stay above the lower bound ε; γ = 1 + 9·sin²(x_γ/2), so γ stays in
// [1, 10] and reaches both bounds with a non-vanishing curvature (a logistic
// map would flatten exponentially near γ = 1, where many fits end).
type objective struct {
	d    *fitData
	pin  [nParams]bool
	val  [nParams]float64
	free []int
	// delta smooths the RMSE terms (see fitData.loss).
	delta float64
	// cache of the last evaluation
	lastX []float64
	lastF float64
	lastG []float64
}

func (o *objective) full(x []float64) [nParams]float64 {
	p := o.val
	for j, i := range o.free {
		if i == iGamma {
			h := math.Sin(x[j] / 2)
			p[i] = MinGamma + (MaxGamma-MinGamma)*h*h
		} else {
			p[i] = Epsilon + math.Exp(x[j])
		}
	}
	return p
}

// toX is the inverse of full (clamped away from the open bounds).
func (o *objective) toX(p [nParams]float64) []float64 {
	x := make([]float64, len(o.free))
	for j, i := range o.free {
		if i == iGamma {
			s := (p[i] - MinGamma) / (MaxGamma - MinGamma)
			s = math.Min(math.Max(s, 1e-9), 1-1e-9)
			x[j] = 2 * math.Asin(math.Sqrt(s))
		} else {
			x[j] = math.Log(math.Max(p[i]-Epsilon, 1e-12))
		}
	}
	return x
}

func (o *objective) eval(x []float64) {
	if o.lastX != nil && equal(o.lastX, x) {
		return
	}
	p := o.full(x)
	var g [nParams]float64
	f := o.d.loss(&p, &g, o.delta)
	if o.lastX == nil {
		o.lastX = make([]float64, len(x))
		o.lastG = make([]float64, len(x))
	}
	copy(o.lastX, x)
	o.lastF = f
	for j, i := range o.free {
		if i == iGamma {
			// γ = 1 + 9·sin²(v/2), dγ/dv = 9·sin(v/2)·cos(v/2) = 4.5·sin v
			o.lastG[j] = g[i] * (MaxGamma - MinGamma) / 2 * math.Sin(x[j])
		} else {
			o.lastG[j] = g[i] * (p[i] - Epsilon)
		}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		o.lastF = math.Inf(1)
	}
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Fit estimates throughput parameters from observations by minimising Loss
// under the bounds of design.md §3 (time parameters ≥ ε, γ ∈ [1, 10]) and the
// pinning rules for what the data cannot identify (see FitOptions and the
// package documentation). gonum's optimize package has no box constraints, so
// Fit optimises a bounded reparameterisation: every free time parameter is
// ε + exp(u) and γ = 1 + 9·sin²(v/2). It runs L-BFGS with the
// analytic gradient from several starting points and keeps the best. After
// the fit, when there is no multi-node observation, AlphaN and BetaN are
// raised to at least 1.1·AlphaR and 1.1·BetaR.
//
// Fit is deterministic: the same observations, in any order, give the same
// parameters. The observations' StepTime − SyncTime must be positive.
func Fit(obs []Observation, opts *FitOptions) (Params, error) {
	if err := checkObservations(obs); err != nil {
		return Params{}, err
	}
	o := FitOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Starts < 0 || o.MaxIterations < 0 {
		return Params{}, fmt.Errorf("%w: FitOptions.Starts = %d and MaxIterations = %d, want >= 0", ErrInvalidInput, o.Starts, o.MaxIterations)
	}
	if o.Starts == 0 {
		o.Starts = DefaultStarts
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = defaultMaxIterations
	}
	if o.Init != nil {
		if err := o.Init.Validate(); err != nil {
			return Params{}, fmt.Errorf("FitOptions.Init: %w", err)
		}
	}
	d := newFitData(obs)
	obj := &objective{d: d}
	obj.pin, obj.val = d.pinned()
	for i := 0; i < nParams; i++ {
		if !obj.pin[i] {
			obj.free = append(obj.free, i)
		}
	}
	best := obj.val
	bestF := math.Inf(1)
	if len(obj.free) == 0 {
		bestF = d.loss(&best, nil, 0)
	}
	for _, start := range d.starts(o, obj.pin, obj.val) {
		if len(obj.free) == 0 {
			break
		}
		x, f := obj.minimize(start, o.MaxIterations)
		if f < bestF {
			bestF, best = f, obj.full(x)
		}
	}
	p := fromVec(best)
	if !d.multiNode {
		p.AlphaN = math.Max(p.AlphaN, 1.1*p.AlphaR)
		p.BetaN = math.Max(p.BetaN, 1.1*p.BetaR)
	}
	return p, nil
}

// starts returns the starting points (full parameter vectors) for Fit.
func (d *fitData) starts(o FitOptions, pin [nParams]bool, val [nParams]float64) [][nParams]float64 {
	apply := func(v [nParams]float64) [nParams]float64 {
		for i := range v {
			if pin[i] {
				v[i] = val[i]
			}
		}
		return v
	}
	out := [][nParams]float64{apply([nParams]float64{0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001})}
	if o.Init != nil {
		out = append(out, apply(o.Init.vec()))
	}
	if o.Starts > 1 {
		scale := math.Max(d.meanAccum, 1e-6)
		ac, bc := d.accLine.fit(1e-6 * scale)
		an, bn := d.netLine[2].fit(1e-4 * scale)
		ar, br := d.netLine[1].fit(1e-4 * scale)
		gammas := []float64{1.2, 3, 1.01, 6, 2, 8, 1.5, 4}
		for k := 0; k < o.Starts-1; k++ {
			g := gammas[k%len(gammas)]
			out = append(out, apply([nParams]float64{ac, bc, an, bn, ar, br, g}))
		}
	}
	return out
}

// smoothing is the delta of the first L-BFGS pass from every start (see
// fitData.loss); the second pass uses the exact loss.
const smoothing = 1e-3

// minimize runs L-BFGS from the full parameter vector start, first on the
// smoothed loss and then on the exact loss, and returns the optimisation
// vector of the best point found and its exact loss.
func (o *objective) minimize(start [nParams]float64, maxIter int) ([]float64, float64) {
	x := o.toX(start)
	o.delta = 0
	o.lastX = nil
	o.eval(x)
	bestX, bestF := append([]float64(nil), x...), o.lastF
	for _, delta := range []float64{smoothing, 0} {
		o.delta = delta
		o.lastX = nil
		if nx, ok := o.lbfgs(x, maxIter); ok {
			x = nx
		}
		o.delta = 0
		o.lastX = nil
		o.eval(x)
		if o.lastF < bestF {
			bestF = o.lastF
			copy(bestX, x)
		}
	}
	o.lastX = nil
	return bestX, bestF
}

// lbfgs runs one L-BFGS pass on the current loss (o.delta) from x0.
func (o *objective) lbfgs(x0 []float64, maxIter int) ([]float64, bool) {
	prob := optimize.Problem{
		Func: func(x []float64) float64 {
			o.eval(x)
			return o.lastF
		},
		Grad: func(g, x []float64) {
			o.eval(x)
			copy(g, o.lastG)
		},
	}
	settings := &optimize.Settings{
		GradientThreshold: 1e-9,
		MajorIterations:   maxIter,
		Converger: &optimize.FunctionConverge{
			Absolute:   1e-11,
			Relative:   1e-10,
			Iterations: 20,
		},
	}
	res, err := optimize.Minimize(prob, x0, settings, &optimize.LBFGS{})
	if res == nil || (err != nil && res.X == nil) {
		return nil, false
	}
	for _, v := range res.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
	}
	return res.X, true
}
