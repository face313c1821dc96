package ilp

import (
	"context"
	"time"
)

// DualPassFunc returns a function that makes one pass of the smoothed dual
// (smoothEval.eval over every free job) of p's model at the multipliers of
// a short Newton run, and a function that runs marginalGreedy on the tight
// path at those multipliers: what the root's dual and first incumbent cost
// per call, for BenchmarkDualPass and BenchmarkMarginalGreedy.
func DualPassFunc(p *Problem) (pass func(), greedy func() float64) {
	m := newModel(p)
	free := m.allJobs()
	lam, _, _ := m.newtonDual(free, m.cap, nil, 12, nil, nil)
	e := newSmoothEval(m.nrows)
	pass = func() { e.eval(m, free, m.cap, lam, 1e-3*m.scale, nil) }
	greedy = func() float64 {
		clk := newClock(context.Background(), time.Now(), 0)
		sr := newSearch(clk, m, &Settings{})
		return sr.freeProfit(free, sr.marginalGreedy(free, m.cap, lam, true))
	}
	return pass, greedy
}
