package ilp

import (
	"context"
	"runtime"
	"time"

	"github.com/sia-sched/sia/internal/measure"
)

// QuickGreedyPastEnd runs quickGreedy over the jobs of a problem of n
// jobs (wideProblem's, at λ = 0) on a locked thread whose CPU clock is
// the solver's, quickGreedyTries times for each offset of its greedyEnd
// after the call's start, and returns, over the offsets, the most of the
// least CPU the tries of an offset ran past their greedyEnd, and that
// offset. (The least of a few, as the deadline tests take the least of
// five solves: this machine's thread clock lags and then catches up, by
// up to several ms at once, and under load one call in a few hundred
// read 0.6-0.8 ms past greedyEnd where its tries read 0.1-0.3 ms.)
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
		least := time.Duration(-1)
		for range quickGreedyTries {
			sr := newSearch(newClock(context.Background(), now(), 0), m, &Settings{})
			sr.clk.greedyEnd = now().Add(off)
			sr.quickGreedy(free, m.cap, lam, nil)
			if past := now().Sub(sr.clk.greedyEnd); least < 0 || past < least {
				least = past
			}
		}
		if least > worst {
			worst, at = least, off
		}
	}
	return worst, at, nil
}

// quickGreedyTries is the number of calls QuickGreedyPastEnd makes per
// offset.
const quickGreedyTries = 3
