package ilp

import (
	"context"
	"math"
	"time"

	"github.com/sia-sched/sia/internal/measure"
)

// DPProgram is one of the knapsack programs sized by the clock's affords,
// for BenchmarkDPCost: Run runs it once on fresh tables (a new search, as
// in a solve) and returns the solving thread's CPU time it took and the
// nanoseconds its size checks estimated.
type DPProgram struct {
	Name string
	Run  func() (time.Duration, int)
}

// timed runs f on sr, returning the thread's CPU time it took and what
// it asked of affords.
func timed(sr *search, f func()) (time.Duration, int) {
	sr.clk.sized = 0
	r0 := measure.Read()
	f()
	return measure.Read().Since(r0), sr.clk.sized
}

// DPPrograms returns p's model's capacity-indexed programs at the
// multipliers of a short Newton run, over every job: seqDP (its mckp per
// type row), improveByType from the Lagrangian choices (repairing) and
// forcedBounds on the first type row (every option allowed).
func DPPrograms(p *Problem) []DPProgram {
	m := newModel(p)
	free := m.allJobs()
	lam, f, _ := m.newtonDual(free, m.cap, nil, 12, nil, nil)
	lp := f // the model's profit is all free: the bound is the dual's value
	fresh := func() *search {
		return newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
	}
	order := typeOrders(len(m.types))[0]
	allowed := make([][]cand, len(free))
	for k, i := range free {
		allowed[k] = append(allowed[k], cand{o: -1})
		for oi := range m.jobs[i].opts {
			allowed[k] = append(allowed[k], cand{o: oi})
		}
	}
	return []DPProgram{
		{"seqDP", func() (time.Duration, int) {
			sr := fresh()
			return timed(sr, func() { sr.seqDP(free, m.cap, lam, order) })
		}},
		{"improveByType", func() (time.Duration, int) {
			sr := fresh()
			choice := make([]int, len(free))
			for k, i := range free {
				_, choice[k] = m.jobs[i].best(lam)
			}
			return timed(sr, func() { sr.improveByType(free, m.cap, choice, 1, true) })
		}},
		{"forcedBounds", func() (time.Duration, int) {
			sr := fresh()
			var b [][]float64
			cpu, est := timed(sr, func() { b = sr.forcedBounds(free, m.cap, lam, 0, allowed) })
			if math.IsInf(b[0][0], 1) {
				est = 0 // not run: no estimate to compare
			}
			return cpu, est
		}},
		{"coreDP", func() (time.Duration, int) {
			sr := fresh()
			sr.cur = make([]int, len(m.jobs))
			for i := range sr.cur {
				sr.cur[i] = -1
			}
			sr.offerFree(free, sr.seqDP(free, m.cap, lam, order))
			// the tables only (sized by affords), to their trace
			r0, at := measure.Read(), time.Duration(0)
			traceStep = func(step string) {
				if step == "coreDP.tables" {
					at = measure.Read().Since(r0)
				}
			}
			defer func() { traceStep = nil }()
			_, est := timed(sr, func() { sr.coreDP(free, m.cap, lam, lp, coreFirstStates) })
			if at == 0 {
				est = 0 // the tables were not built
			}
			return at, est
		}},
	}
}
