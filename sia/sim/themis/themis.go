// Package themis is the Themis baseline of the simulator: Gavel's
// finish-time-fairness policy (Gavel, OSDI '20, §4.2, after Themis, NSDI
// '20), run with Gavel's round mechanics on rigid jobs at the workload's
// requested GPU count and batch size (the paper's "+TJ" baselines, §5.1).
//
// Each round it chooses Gavel's time shares X[j,c] (job j's fraction of the
// round on GPU type c) to minimise the largest finish-time-fairness ratio
//
//	ρ_j = t_alloc_j / t_iso_j,
//	t_alloc_j = age_j + remaining_steps_j / Σ_c T[j,c]·X[j,c],
//	t_iso_j   = prestart_j + total_steps_j / iso_j,
//
// subject to Gavel's base constraints (Σ_j replicas_j·X[j,c] ≤ GPUs of c,
// Σ_c X[j,c] ≤ 1). iso_j is the throughput of the isolated allocation, an
// equal 1/m share of every type (m active jobs), and prestart_j the wait for
// the first round boundary plus the model's checkpoint-restore time.
//
// The min-max ratio is quasi-convex in X: for a fixed ρ the constraints
// ρ_j ≤ ρ are linear (Σ_c T[j,c]·X[j,c] ≥ remaining_j / (ρ·t_iso_j − age_j)),
// so the optimum is found by bisection on ρ over feasibility LPs (gonum's
// simplex; a closed form on one GPU type), between the lower bound of every
// job running alone at its best type and the isolated allocation's ratio.
// At the optimal ρ a last LP spends the remaining capacity on normalised
// throughput (Σ T[j,c]·X[j,c] / max_c T[j,c]). When no LP solves, the round
// falls back to the isolated allocation, as Gavel's implementation does.
// Gavel's priorities (X over time received), stickiness and worker
// assignment then turn X into GPUs (see package gavel).
package themis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
)

// DefaultRound is Gavel's round length in seconds, also used for Themis.
const DefaultRound = 360

// Options tune the Themis baseline. A nil *Options gives the defaults.
type Options struct {
	// Tolerance is the relative precision of the bisection on the
	// min-max ratio (0 = 1e-4).
	Tolerance float64
}

// New returns the Themis policy for a cluster and ground truth, with round
// length round seconds (0 = DefaultRound). Use one per simulated workload.
func New(c sim.Cluster, truth sim.Truth, round float64, opt *Options) *gavel.Policy {
	if round == 0 {
		round = DefaultRound
	}
	a := &Allocator{Truth: truth}
	if opt != nil {
		a.Tolerance = opt.Tolerance
	}
	return gavel.NewWithOptions(c, truth, round, &gavel.Options{Name: "themis", Allocator: a})
}

// Allocator is Gavel's finish-time-fairness objective as a gavel.Allocator.
type Allocator struct {
	// Truth gives the jobs' step counts (Gavel's cur_step and total_steps).
	Truth sim.Truth
	// Tolerance is as Options.Tolerance.
	Tolerance float64
	// Fallbacks counts the rounds that fell back to the isolated allocation.
	Fallbacks int
}

// jobTimes are the quantities of one job's ratio.
type jobTimes struct {
	age, remain, tIso, tMax float64
}

// Ratio returns the finish-time-fairness ratio Gavel's policy assigns to job
// i of r under time shares X (+Inf when X gives it no throughput).
func (a *Allocator) Ratio(r *gavel.Round, X [][]float64, i int) float64 {
	jt := a.times(r)[i]
	y := 0.0
	for c := range r.Types {
		y += r.T[i][c] * X[i][c]
	}
	if !(y > 0) {
		return math.Inf(1)
	}
	return (jt.age + jt.remain/y) / jt.tIso
}

// Allocate implements gavel.Allocator.
func (a *Allocator) Allocate(ctx context.Context, r *gavel.Round) ([][]float64, error) {
	if len(r.Jobs) == 0 {
		return nil, nil
	}
	iso := isolated(r)
	jt := a.times(r)
	lo, hi := 0.0, 0.0
	for i, t := range jt {
		lo = math.Max(lo, (t.age+t.remain/t.tMax)/t.tIso)
		y := 0.0
		for c := range r.Types {
			y += r.T[i][c] * iso[i][c]
		}
		hi = math.Max(hi, (t.age+t.remain/y)/t.tIso)
	}
	tol := a.Tolerance
	if tol <= 0 {
		tol = 1e-4
	}
	if _, ok := a.feasible(r, jt, hi, false); !ok {
		a.Fallbacks++
		return iso, nil
	}
	for hi-lo > tol*hi {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mid := (lo + hi) / 2
		if _, ok := a.feasible(r, jt, mid, false); ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	X, ok := a.feasible(r, jt, hi, true)
	if !ok {
		a.Fallbacks++
		return iso, nil
	}
	return X, nil
}

// isolated returns Gavel's isolated allocation: 1/m of every type's GPUs per
// job, each row scaled down to a total share of at most 1.
func isolated(r *gavel.Round) [][]float64 {
	m := float64(len(r.Jobs))
	X := make([][]float64, len(r.Jobs))
	for i, j := range r.Jobs {
		X[i] = make([]float64, len(r.Types))
		s := 0.0
		for c := range r.Types {
			X[i][c] = float64(r.Capacity[c]) / m / float64(max(j.Spec.Replicas, 1))
			s += X[i][c]
		}
		for c := range X[i] {
			X[i][c] /= math.Max(s, 1)
		}
	}
	return X
}

// times computes each job's age, remaining steps, isolated time and best
// throughput.
func (a *Allocator) times(r *gavel.Round) []jobTimes {
	iso := isolated(r)
	out := make([]jobTimes, len(r.Jobs))
	for i, j := range r.Jobs {
		cur, total := gavel.Steps(a.Truth, j)
		y := 0.0
		tMax := 0.0
		for c := range r.Types {
			y += r.T[i][c] * iso[i][c]
			tMax = math.Max(tMax, r.T[i][c])
		}
		prestart := r.Length - math.Mod(j.Spec.Submit, r.Length) + j.App.RestartDelay
		out[i] = jobTimes{age: r.Now - j.Spec.Submit, remain: math.Max(1, total-cur), tIso: prestart + total/y, tMax: tMax}
	}
	return out
}

// demands returns the throughput each job needs for ratio ρ (false when the
// age alone exceeds it).
func demands(jt []jobTimes, rho float64) ([]float64, bool) {
	d := make([]float64, len(jt))
	for i, t := range jt {
		room := rho*t.tIso - t.age
		if !(room > 0) {
			return nil, false
		}
		d[i] = t.remain / room
		if d[i] > t.tMax*(1+1e-12) {
			return nil, false
		}
	}
	return d, true
}

// feasible reports whether ratio ρ is achievable; with spend it also
// returns the shares that meet it and maximise normalised throughput.
func (a *Allocator) feasible(r *gavel.Round, jt []jobTimes, rho float64, spend bool) ([][]float64, bool) {
	d, ok := demands(jt, rho)
	if !ok {
		return nil, false
	}
	if len(r.Types) == 1 {
		return oneType(r, d, spend)
	}
	X, err := solveLP(r, jt, d, spend)
	if err != nil {
		return nil, false
	}
	return X, true
}

// oneType is feasible on a single type in closed form: X_j = d_j / T_j.
// With spend, the capacity left is handed out as the LP's optimum does
// (normalised throughput is X_j itself): to the smallest jobs first.
func oneType(r *gavel.Round, d []float64, spend bool) ([][]float64, bool) {
	X := make([][]float64, len(r.Jobs))
	used := 0.0
	for i, j := range r.Jobs {
		x := d[i] / r.T[i][0]
		if x > 1+1e-9 {
			return nil, false
		}
		X[i] = []float64{math.Min(1, x)}
		used += float64(j.Spec.Replicas) * X[i][0]
	}
	if used > float64(r.Capacity[0])*(1+1e-9) {
		return nil, false
	}
	if !spend {
		return nil, true
	}
	order := make([]int, len(r.Jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return r.Jobs[order[a]].Spec.Replicas < r.Jobs[order[b]].Spec.Replicas })
	left := math.Max(0, float64(r.Capacity[0])-used)
	for _, i := range order {
		sf := float64(r.Jobs[i].Spec.Replicas)
		add := math.Min(1-X[i][0], left/sf)
		X[i][0] += add
		left -= add * sf
	}
	return X, true
}

// errLP wraps the LP's failure.
var errLP = errors.New("themis: LP failed")

// solveLP finds X with Σ_c T·X ≥ d per job under Gavel's base constraints,
// maximising Σ T·X / max_c T when spend is set (else any feasible X).
// Variables: X (J·C), capacity slacks (C), share slacks (J), demand
// surpluses (J); rows: capacities, shares, demands.
func solveLP(r *gavel.Round, jt []jobTimes, d []float64, spend bool) ([][]float64, error) {
	J, C := len(r.Jobs), len(r.Types)
	nv := J*C + C + 2*J
	A := mat.NewDense(C+2*J, nv, nil)
	b := make([]float64, C+2*J)
	cost := make([]float64, nv)
	// Demands are relaxed by a relative 1e-9 so that the bisection's
	// boundary ρ stays feasible despite rounding.
	for i, j := range r.Jobs {
		for c := range r.Types {
			v := i*C + c
			A.Set(c, v, float64(j.Spec.Replicas))
			A.Set(C+i, v, 1)
			A.Set(C+J+i, v, r.T[i][c])
			if spend {
				cost[v] = -r.T[i][c] / jt[i].tMax
			}
		}
		A.Set(C+i, J*C+C+i, 1)
		b[C+i] = 1
		A.Set(C+J+i, J*C+C+J+i, -1)
		b[C+J+i] = d[i] * (1 - 1e-9)
	}
	for c := range r.Types {
		A.Set(c, J*C+c, 1)
		b[c] = float64(r.Capacity[c])
	}
	_, x, err := lp.Simplex(cost, A, b, 1e-10, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errLP, err)
	}
	X := make([][]float64, J)
	for i := range X {
		X[i] = make([]float64, C)
		for c := range X[i] {
			X[i][c] = math.Min(1, math.Max(0, x[i*C+c]))
		}
	}
	return X, nil
}
