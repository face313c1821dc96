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
//
// A data-parallel replica is one GPU, so Replicas >= Nodes. A
// hybrid-parallel (pipeline) job's replica is a pipeline of Stages GPUs,
// which may span nodes: with Stages > 1 an observation may have fewer
// replicas than nodes, as long as its Replicas × Stages GPUs cover them
// (Nodes <= Replicas × Stages; for example one 4-stage pipeline over 2
// nodes). Such an observation is fitted, and Model.Best predicts it, with
// the network term of several nodes (Params.NetTime(nodes, replicas) with
// nodes > 1): its SyncTime is the step's cross-node communication.
type Observation struct {
	Nodes, Replicas, LocalBatch int
	StepTime, SyncTime          float64
	// Stages is the number of pipeline stages (GPUs) per replica of a
	// hybrid-parallel job; 0 or 1 for a data-parallel job. Only the
	// Replicas >= Nodes rule depends on it.
	Stages int `json:",omitempty"`
}

// MaxStages bounds Observation.Stages (the same bound as Model.Stages).
const MaxStages = MaxBatchSize

// CoversNodes reports whether replicas replicas of stages GPUs each
// (stages <= 1: one GPU each, data parallel) can span nodes nodes, with
// at least one GPU per node: nodes <= replicas × max(stages, 1), checked
// without overflow. It is the rule Fit, Loss and Model.Best apply to the
// shape of an observation or configuration.
func CoversNodes(nodes, replicas, stages int) bool {
	if nodes < 1 || replicas < 1 {
		return false
	}
	if replicas >= nodes {
		return true
	}
	if stages <= 1 {
		return false
	}
	return (nodes-1)/stages < replicas // ceil(nodes/stages) <= replicas
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
func (e *ObservationError) Unwrap() []error { return []error{ErrInvalidInput} }

// FitOptions tune Fit. A nil *FitOptions means the defaults.
type FitOptions struct {
	// Starts is the number of starting points tried; the best local optimum
	// wins. 0 means DefaultStarts; 1 means only the published artifact's
	// starting point (0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001). Further
	// starts are derived from the data (least-squares estimates of the
	// compute and network lines) with different overlap exponents γ.
	// At most MaxStarts.
	Starts int
	// MaxIterations caps the L-BFGS iterations of each pass (one rough pass
	// per starting point, then up to two polishing passes). 0 means 300;
	// at most MaxIterationsLimit.
	MaxIterations int
	// Init, if not nil, is tried as an additional starting point (for
	// example the previous fit when new observations arrive). Its pinned
	// components are ignored.
	Init *Params
}

// DefaultStarts is the number of starting points Fit tries by default.
const DefaultStarts = 4

// MaxStarts and MaxIterationsLimit bound FitOptions.Starts and
// FitOptions.MaxIterations (larger values only cost time: the derived
// starting points repeat after eight).
const (
	MaxStarts          = 256
	MaxIterationsLimit = 1_000_000
)

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
	acc, net    int // indices of the group's local batch in fitData.acc and of its network time in fitData.nets
}

// netGroup is one distinct network time (kind, max(r−2, ε)).
type netGroup struct {
	kind int
	x    float64
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
	nets           []netGroup
	// scratch for loss: T_acc and its log per acc group, T_net and its log per net group
	accT, accLog, netT, netLog []float64
}

func checkObservations(obs []Observation) error {
	if len(obs) == 0 {
		return fmt.Errorf("%w: no observations", ErrInvalidInput)
	}
	for i, o := range obs {
		switch {
		case o.Nodes < 1:
			return &ObservationError{i, "Nodes", fmt.Sprintf("%d, want >= 1", o.Nodes)}
		case o.Stages < 0 || o.Stages > MaxStages:
			return &ObservationError{i, "Stages", fmt.Sprintf("%d, want a value in [0, %d] (0 or 1: data parallel)", o.Stages, MaxStages)}
		case o.Replicas < 1:
			return &ObservationError{i, "Replicas", fmt.Sprintf("%d, want >= 1", o.Replicas)}
		case !CoversNodes(o.Nodes, o.Replicas, o.Stages):
			return &ObservationError{i, "Replicas", replicasReason(o)}
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

// replicasReason says why o's replicas cannot span its nodes.
func replicasReason(o Observation) string {
	if o.Stages > 1 {
		return fmt.Sprintf("%d pipelines of %d stages on %d nodes: want Nodes <= Replicas × Stages (at least one GPU per node)", o.Replicas, o.Stages, o.Nodes)
	}
	return fmt.Sprintf("%d, want >= Nodes = %d (a data-parallel replica is one GPU; set Stages for a pipeline that spans nodes)", o.Replicas, o.Nodes)
}

// kindOf returns the network kind of a shape (0: one replica on one node,
// 1: several replicas on one node, 2: several nodes — also one pipeline
// over several nodes), the same case analysis as Params.NetTime.
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
	type nkey struct{ kind, r int }
	netIdx := map[nkey]int{}
	for i, k := range syncKeys {
		syncIdx[k] = i
		x := math.Max(float64(k.r-2), Epsilon)
		nk := nkey{k.kind, k.r}
		ni, ok := netIdx[nk]
		if !ok { // syncKeys are sorted by kind then r, so nets come out sorted too
			ni = len(d.nets)
			netIdx[nk] = ni
			d.nets = append(d.nets, netGroup{kind: k.kind, x: x})
		}
		d.sync[i] = syncGroup{kind: k.kind, x: x, b: float64(k.b), acc: accIdx[k.b], net: ni}
	}
	d.accT = make([]float64, len(d.acc))
	d.accLog = make([]float64, len(d.acc))
	d.netT = make([]float64, len(d.nets))
	d.netLog = make([]float64, len(d.nets))
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
// values (Pollux, OSDI '21): one distinct local batch → AlphaC = mean
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

// Loss weights of the regularisers (Pollux, OSDI '21).
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
	for i, q := range d.acc {
		a := ac + bc*q.b
		la := math.Log(a)
		d.accT[i], d.accLog[i] = a, la
		e := la - q.mean
		sa += q.count * e * e
		if grad != nil {
			k := 2 * q.count * e / a
			ga[iAlphaC] += k
			ga[iBetaC] += k * q.b
		}
	}
	for i, q := range d.nets {
		var t float64
		switch q.kind {
		case 2:
			t = p[iAlphaN] + p[iBetaN]*q.x
		case 1:
			t = p[iAlphaR] + p[iBetaR]*q.x
		default:
			t = Epsilon + Epsilon*q.x
		}
		d.netT[i], d.netLog[i] = t, math.Log(t)
	}
	ss := d.syncSS
	for _, q := range d.sync {
		a, la := d.accT[q.acc], d.accLog[q.acc]
		t, lt := d.netT[q.net], d.netLog[q.net]
		var alpha, beta int
		switch q.kind {
		case 2:
			alpha, beta = iAlphaN, iBetaN
		case 1:
			alpha, beta = iAlphaR, iBetaR
		}
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

// Loss returns the fitting objective of Pollux (OSDI '21) for parameters p on
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
// under the bounds of Pollux's fit (time parameters ≥ ε, γ ∈ [1, 10]).
//
// Parameters the data cannot identify are pinned: with one distinct local
// batch AlphaC = mean(StepTime − SyncTime)/2; with no multi-node observation
// AlphaN = BetaN = ε; with no single-node multi-GPU observation AlphaR =
// BetaR = ε; with no observation of more than two replicas BetaN = BetaR = ε.
// After the fit, when there is no multi-node observation, AlphaN and BetaN
// are raised to at least 1.1·AlphaR and 1.1·BetaR, so that with 1-GPU data
// only the model predicts near-linear scaling.
//
// gonum's optimize package has no box constraints, so Fit optimises a bounded
// reparameterisation: every free time parameter is ε + exp(u) (log scale,
// strictly above the bound ε) and γ = 1 + 9·sin²(v/2) (inside [1, 10]). From
// each starting point (see FitOptions.Starts) it runs L-BFGS with the analytic
// gradient and a More–Thuente line search on a smoothed loss, in which each
// RMSE term r becomes sqrt(r² + 10⁻⁶) − 10⁻³ so that noise-free data (an RMSE
// of zero, a kink) does not stall the line search; the best result is then
// polished by L-BFGS on the exact loss. The lowest exact loss seen wins.
//
// Fit is deterministic: the same observations, in any order, give the same
// parameters. Observations must have StepTime > SyncTime ≥ 0.
func Fit(obs []Observation, opts *FitOptions) (Params, error) {
	if err := checkObservations(obs); err != nil {
		return Params{}, err
	}
	o := FitOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Starts < 0 || o.Starts > MaxStarts {
		return Params{}, fmt.Errorf("%w: FitOptions.Starts = %d, want a value in [0, %d]", ErrInvalidInput, o.Starts, MaxStarts)
	}
	if o.MaxIterations < 0 || o.MaxIterations > MaxIterationsLimit {
		return Params{}, fmt.Errorf("%w: FitOptions.MaxIterations = %d, want a value in [0, %d]", ErrInvalidInput, o.MaxIterations, MaxIterationsLimit)
	}
	if o.Starts == 0 {
		o.Starts = DefaultStarts
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = defaultMaxIterations
	}
	if o.Init != nil {
		if err := o.Init.check("FitOptions.Init"); err != nil {
			return Params{}, err
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
	if len(obj.free) > 0 {
		best = obj.full(obj.search(d.starts(o, obj.pin, obj.val), o.MaxIterations))
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
// fitData.loss); the final pass uses the exact loss.
const smoothing = 1e-3

// pass describes one L-BFGS pass: the loss smoothing and the stopping rule.
type pass struct {
	delta, gradTol, relTol float64
	stall                  int
}

var (
	// roughPass runs from every start on the smoothed loss, to a loose
	// tolerance: it only has to find the right basin.
	roughPass = pass{delta: smoothing, gradTol: 1e-6, relTol: 1e-8, stall: 5}
	// finePass polishes the best rough result on the exact loss.
	finePass = pass{delta: 0, gradTol: 1e-9, relTol: 1e-10, stall: 3}
)

// search runs a rough pass from every start (full parameter vectors), then
// fine passes from the best rough result, and returns the optimisation vector
// with the lowest exact loss seen.
func (o *objective) search(starts [][nParams]float64, maxIter int) []float64 {
	var bestX []float64
	bestF := math.Inf(1)
	consider := func(x []float64) {
		o.delta = 0
		o.lastX = nil
		o.eval(x)
		if o.lastF < bestF {
			bestF = o.lastF
			bestX = append(bestX[:0], x...)
		}
	}
	for _, st := range starts {
		x := o.toX(st)
		consider(x)
		if nx, ok := o.lbfgs(x, roughPass, maxIter); ok {
			consider(nx)
		}
	}
	// Polish on the exact loss; repeat once if it still moved (restarting
	// L-BFGS drops stale curvature pairs from the smoothed pass).
	for k := 0; k < 2; k++ {
		before := bestF
		if nx, ok := o.lbfgs(append([]float64(nil), bestX...), finePass, maxIter); ok {
			consider(nx)
		}
		if !(bestF < before-1e-8*math.Abs(before)) {
			break
		}
	}
	o.lastX = nil
	return bestX
}

// lbfgs runs one L-BFGS pass from x0 and returns the best point it
// reached. It drives gonum's optimize.LinesearchMethod with optimize.LBFGS
// directions and a More–Thuente line search synchronously, in the calling
// goroutine (optimize.Minimize would start goroutines and pay a channel
// round trip per evaluation, which dominates a fit of a few dozen
// observations).
func (o *objective) lbfgs(x0 []float64, ps pass, maxIter int) ([]float64, bool) {
	o.delta = ps.delta
	o.lastX = nil
	n := len(x0)
	loc := &optimize.Location{X: append([]float64(nil), x0...), Gradient: make([]float64, n)}
	o.eval(loc.X)
	loc.F = o.lastF
	copy(loc.Gradient, o.lastG)
	if math.IsInf(loc.F, 0) || math.IsNaN(loc.F) || !allFinite(loc.Gradient) {
		return nil, false
	}
	best := append([]float64(nil), loc.X...)
	bestF := loc.F
	if infNorm(loc.Gradient) < ps.gradTol {
		return best, true
	}
	conv := &optimize.FunctionConverge{Absolute: 1e-12, Relative: ps.relTol, Iterations: ps.stall}
	conv.Init(n)
	conv.Converged(loc)
	method := &optimize.LinesearchMethod{
		NextDirectioner: &optimize.LBFGS{Store: 15},
		Linesearcher:    &optimize.MoreThuente{},
	}
	const evalMask = optimize.FuncEvaluation | optimize.GradEvaluation | optimize.HessEvaluation
	maxEvals := 20 * maxIter
	op, err := method.Init(loc)
	for evals, iters := 1, 0; err == nil && evals < maxEvals; op, err = method.Iterate(loc) {
		switch {
		case op == optimize.MajorIteration:
			iters++
			if loc.F < bestF {
				bestF = loc.F
				copy(best, loc.X)
			}
			if iters >= maxIter || infNorm(loc.Gradient) < ps.gradTol || conv.Converged(loc) != optimize.NotTerminated {
				return best, true
			}
		case op&evalMask != 0 && op&^evalMask == 0:
			if !allFinite(loc.X) {
				return best, true
			}
			o.eval(loc.X)
			evals++
			if op&optimize.FuncEvaluation != 0 {
				loc.F = o.lastF
			}
			if op&optimize.GradEvaluation != 0 {
				copy(loc.Gradient, o.lastG)
			}
		default:
			return best, true
		}
	}
	return best, true
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func infNorm(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
