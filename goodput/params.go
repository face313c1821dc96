package goodput

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidInput is the sentinel wrapped by every error this package returns
// for bad caller data (parameters, models, observations, options). Use
// errors.Is(err, goodput.ErrInvalidInput).
var ErrInvalidInput = errors.New("goodput: invalid input")

// Epsilon is the tiny positive time (seconds) the model uses in place of zero:
// the lower bound of every fitted time parameter, the value of pinned network
// parameters, and the floor of max(r−2, ε) in the network-time formula.
const Epsilon = 1e-8

// MinGamma and MaxGamma bound the overlap exponent γ.
const (
	MinGamma = 1.0
	MaxGamma = 10.0
)

// Params are the seven parameters of the throughput model of one job on one GPU
// type (Pollux, OSDI '21; paper §3.2). Times are in seconds.
//
//	T_acc  = AlphaC + BetaC·b                         one micro-batch of b samples per GPU
//	T_net  = AlphaN + BetaN·max(r−2, ε)   if nodes > 1
//	       = AlphaR + BetaR·max(r−2, ε)   if nodes = 1 and r > 1
//	       = ε + ε·max(r−2, ε) ≈ 0        if r = 1
//	T_sync = (T_acc^γ + T_net^γ)^(1/γ)               optimizer step (overlapped all-reduce)
//	T_iter = s·T_acc + T_sync                         s extra accumulation steps
type Params struct {
	// AlphaC and BetaC give the compute time of one micro-batch: AlphaC + BetaC·b.
	AlphaC, BetaC float64
	// AlphaN and BetaN give the all-reduce time across nodes.
	AlphaN, BetaN float64
	// AlphaR and BetaR give the all-reduce time inside one node.
	AlphaR, BetaR float64
	// Gamma in [1, 10] models how compute and communication overlap: 1 = no
	// overlap (times add), large = full overlap (the slower one dominates).
	Gamma float64
}

// Validate reports whether p can be evaluated: every time parameter finite and
// ≥ 0, AlphaC + BetaC > 0, and Gamma in [MinGamma, MaxGamma]. The error names
// the offending field and wraps ErrInvalidInput.
func (p Params) Validate() error { return p.check("Params") }

// check is Validate with the field path prefix used in messages.
func (p Params) check(prefix string) error {
	fields := [...]struct {
		name string
		v    float64
	}{
		{"AlphaC", p.AlphaC}, {"BetaC", p.BetaC},
		{"AlphaN", p.AlphaN}, {"BetaN", p.BetaN},
		{"AlphaR", p.AlphaR}, {"BetaR", p.BetaR},
	}
	for _, f := range fields {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("%w: %s.%s = %v, want a finite value >= 0", ErrInvalidInput, prefix, f.name, f.v)
		}
	}
	if !(p.AlphaC+p.BetaC > 0) {
		return fmt.Errorf("%w: %s.AlphaC + %s.BetaC = 0, compute time must be positive", ErrInvalidInput, prefix, prefix)
	}
	if !(p.Gamma >= MinGamma && p.Gamma <= MaxGamma) {
		return fmt.Errorf("%w: %s.Gamma = %v, want a value in [%v, %v]", ErrInvalidInput, prefix, p.Gamma, MinGamma, MaxGamma)
	}
	return nil
}

// AccumTime returns T_acc, the time of one micro-batch of localBatch samples
// per GPU (forward and backward pass, no synchronisation).
func (p Params) AccumTime(localBatch float64) float64 {
	return p.AlphaC + p.BetaC*localBatch
}

// NetTime returns T_net, the all-reduce time of one optimizer step with the
// given number of nodes and data-parallel replicas. Any shape over several
// nodes takes the multi-node term, also one pipeline (a hybrid-parallel
// replica) that spans nodes: its step's cross-node communication.
func (p Params) NetTime(nodes, replicas int) float64 {
	x := math.Max(float64(replicas-2), Epsilon)
	switch {
	case nodes > 1:
		return p.AlphaN + p.BetaN*x
	case replicas > 1:
		return p.AlphaR + p.BetaR*x
	default:
		return Epsilon + Epsilon*x
	}
}

// SyncTime returns T_sync, the time of the micro-batch that ends with the
// optimizer step: compute and all-reduce combined by the γ-norm. It is the
// model's prediction of a measured step time without accumulation.
func (p Params) SyncTime(nodes, replicas int, localBatch float64) float64 {
	return pnorm(p.AccumTime(localBatch), p.NetTime(nodes, replicas), p.Gamma)
}

// IterTime returns T_iter = s·T_acc + T_sync, the time of one optimizer step
// with accumSteps = s extra accumulation micro-batches per replica.
func (p Params) IterTime(nodes, replicas int, localBatch float64, accumSteps int) float64 {
	return float64(accumSteps)*p.AccumTime(localBatch) + p.SyncTime(nodes, replicas, localBatch)
}

// Throughput returns X = r·b·(s+1) / T_iter in samples per second.
func (p Params) Throughput(nodes, replicas int, localBatch float64, accumSteps int) float64 {
	return float64(replicas) * localBatch * float64(accumSteps+1) / p.IterTime(nodes, replicas, localBatch, accumSteps)
}

// pnorm returns (a^g + b^g)^(1/g) for a, b ≥ 0 without overflow.
func pnorm(a, b, g float64) float64 {
	hi, lo := a, b
	if lo > hi {
		hi, lo = lo, hi
	}
	if hi <= 0 {
		return 0
	}
	if g == 1 {
		return hi + lo
	}
	return hi * math.Pow(1+math.Pow(lo/hi, g), 1/g)
}

// GradStats are the gradient statistics behind statistical efficiency,
// measured at the initial batch size M0: Sqr = |g|², the squared norm of the
// true gradient, and Var = tr Σ, the trace of the per-sample gradient
// covariance (both as reported by AdaScale / the validation files).
type GradStats struct {
	Sqr, Var float64
}

// Validate reports whether g is usable: both values finite and ≥ 0.
func (g GradStats) Validate() error { return g.check("GradStats") }

func (g GradStats) check(prefix string) error {
	if math.IsNaN(g.Sqr) || math.IsInf(g.Sqr, 0) || g.Sqr < 0 {
		return fmt.Errorf("%w: %s.Sqr = %v, want a finite value >= 0", ErrInvalidInput, prefix, g.Sqr)
	}
	if math.IsNaN(g.Var) || math.IsInf(g.Var, 0) || g.Var < 0 {
		return fmt.Errorf("%w: %s.Var = %v, want a finite value >= 0", ErrInvalidInput, prefix, g.Var)
	}
	return nil
}

// Gain returns the progress per optimizer step at global batch size batch,
// in iterations at initBatch: with scale = batch/initBatch,
//
//	gain = (Var + Sqr) / (Var/scale + Sqr)
//
// and 1 when the denominator is not positive (no statistics yet).
func Gain(g GradStats, initBatch, batch float64) float64 {
	scale := batch / initBatch
	den := g.Var/scale + g.Sqr
	if !(den > 0) {
		return 1
	}
	return (g.Var + g.Sqr) / den
}

// Efficiency returns the statistical efficiency E(M) = gain/scale of global
// batch size batch relative to initBatch (M0): the progress per sample
// relative to training at M0. E(M0) = 1 and E decreases as M grows; it equals
// (φ + M0)/(φ + M) with the gradient noise scale φ = M0·Var/Sqr.
func Efficiency(g GradStats, initBatch, batch float64) float64 {
	return Gain(g, initBatch, batch) * initBatch / batch
}
