package ilp

import (
	"context"
	"runtime"
	"time"

	"github.com/sia-sched/sia/internal/measure"
)

// QuickGreedyPastEnd runs quickGreedy over the jobs of a problem of n
// jobs (wideProblem's, at λ = 0) on a locked thread whose CPU clock is
// the solver's, once for each offset of its greedyEnd after the call's
// start, and returns the most CPU any call ran past its greedyEnd and
// that call's offset.
func QuickGreedyPastEnd(n int, offsets []time.Duration) (worst, at time.Duration, err error) {
	p := wideProblem(n, 8)
	sc, err := p.validate(nil, nil)
	if err != nil {
		return 0, 0, err
	}
	m := buildModel(p, sc, nil)
	lam := make([]float64, m.nrows)
	free := m.allJobs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	runtime.GC()
	r0 := measure.Read()
	base := r0.Wall
	now = func() time.Time { return base.Add(measure.Read().Since(r0)) }
	defer func() { now = time.Now }()
	for _, off := range offsets {
		sr := newSearch(newClock(context.Background(), now(), 0), m, &Settings{})
		sr.clk.greedyEnd = now().Add(off)
		sr.quickGreedy(free, m.cap, lam, nil)
		if past := now().Sub(sr.clk.greedyEnd); past > worst {
			worst, at = past, off
		}
	}
	return worst, at, nil
}
