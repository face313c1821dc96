package ilp

import (
	"context"
	"math"
	"time"
)

// MarginalGreedyLoss returns how far marginalGreedy's incumbent is below
// the dual's minimum (the cutting-plane method's, to 1e-10) relative to
// it, at that minimum's multipliers (no clock: deterministic).
func MarginalGreedyLoss(p *Problem) float64 {
	m := newModel(p)
	free := m.allJobs()
	lam, fc := m.minimizeDual(free, m.cap, nil, 1e-10*m.scale, 600)
	sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
	c := sr.marginalGreedy(free, m.cap, lam, true)
	if !sr.feasible(c) {
		return math.NaN()
	}
	return (fc - sr.profit(c)) / math.Max(1, math.Abs(fc))
}

// NewtonFirstFullPass returns how far above the dual's minimum the first
// pass of newtonDual over every job (after its sample's, when it takes
// one) is, relative to the minimum.
func NewtonFirstFullPass(p *Problem) float64 {
	m := newModel(p)
	free := m.allJobs()
	_, fc := m.minimizeDual(free, m.cap, nil, 1e-10*m.scale, 600)
	full := math.NaN()
	sample := len(free) >= newtonSampleMin
	newtonTrace = func(pass int, mu, f float64, d time.Duration) {
		// the sample's passes run at the first temperature, those over
		// every job below it
		if math.IsNaN(full) && (!sample || mu < newtonMu0/2) {
			full = (f - fc) / math.Max(1, math.Abs(fc))
		}
	}
	defer func() { newtonTrace = nil }()
	m.newtonDual(free, m.cap, nil, 40, nil, nil)
	return full
}
