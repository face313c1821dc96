package ilp

import (
	"cmp"
	"math/bits"
	"time"
)

// greedyMinWork is the work, in units of an option tested against one of
// its rows, that the late admission does before it looks at the clock:
// with its first greedyMinJobs jobs, but no more than this (64 jobs of 16
// options and 1 quota). Without it, 64 jobs under 4,000 quotas each
// tested half a million rows after the deadline, whatever the clock.
const greedyMinWork = 1 << 11

// lateBudget counts the work of admitLate's passes (see job and spend).
type lateBudget struct {
	jobs, work, since int
}

// job accounts for the next job of the greedy pass and reports whether the
// pass must stop before it: the clock's greedyEnd has passed. It looks at
// the clock once the first greedyMinJobs jobs or greedyMinWork units are
// done, then every 32 jobs. A nil clock never stops.
func (l *lateBudget) job(clk *clock) bool {
	if clk == nil {
		return false
	}
	n := l.jobs
	l.jobs++
	if n < greedyMinJobs && l.work <= greedyMinWork || n%32 != 0 {
		return false
	}
	l.since = 0
	return clk.greedyOver()
}

// spend accounts for units of work (an option tested against a row, or
// validated) and reports whether the pass must stop now: it looks at the
// clock every greedyMinWork units, so that no job, however many options
// and rows it has, runs long past greedyEnd. A nil clock never stops.
func (l *lateBudget) spend(clk *clock, units int) bool {
	if clk == nil {
		return false
	}
	l.work += units
	if l.since += units; l.since < greedyMinWork {
		return false
	}
	l.since = 0
	return clk.greedyOver()
}

// greedyAffords reports whether work of about n nanoseconds ends before
// the clock's greedyEnd (always without a deadline).
func (c *clock) greedyAffords(n int) bool {
	return c.greedyEnd.IsZero() || time.Duration(n) < c.greedyEnd.Sub(now())
}

// greedyMinRows is the work, in options times the rows each enters, that
// each pass of the search's greedy incumbents does before it looks at the
// clock, with its first greedyMinJobs jobs (64 jobs of 40 options on 6
// rows); then it looks every 32 jobs or this much work, whichever comes
// first. Counting by jobs alone, a pass under 4,000 quotas over every job
// entered 250,000 rows (1.5-3.5 ms) between two looks at the clock.
const greedyMinRows = 1 << 14

// greedyPace paces one pass of the search's greedy incumbents over its
// jobs (see over).
type greedyPace struct {
	jobs, work, since int
	strict            bool // stop at the deadline too (a greedy that is not essential)
}

// over accounts for the next job of the pass, j, and reports whether the
// pass must stop before it: the clock's greedyEnd has passed (see
// greedyMinRows).
func (g *greedyPace) over(clk *clock, j *mjob) bool {
	rows := 0
	for gi := range j.groups {
		rows = max(rows, len(j.groups[gi].rows))
	}
	cost := len(j.opts) * (1 + rows)
	n := g.jobs
	g.jobs++
	g.work += cost
	g.since += cost
	if n < greedyMinJobs && g.work <= greedyMinRows || n%32 != 0 && g.since < greedyMinRows {
		return false
	}
	g.since = 0
	return clk.greedyOver() || g.strict && clk.expired()
}

// dualWork is the work, in units of a job's group or row read, that an
// evaluation of the dual does between two looks at its stop function:
// about 10-20 µs. Counted by jobs (every 128), an evaluation right after
// the build, whose model is not in the cache, read 128 jobs of 40
// options in 0.1-0.2 ms between two looks (the corpus's 5,000-job rounds
// at 20 ms: the root's dual ended 0.2-0.4 ms after its end), and under
// 4,000 quotas over every job 128 jobs priced half a million rows.
const dualWork = 1 << 9

// dualPace paces one evaluation of the dual over its jobs (see over).
type dualPace struct{ work int }

// over accounts for evaluating job j next and reports whether the
// evaluation must stop before it: once dualWork units are done since the
// last look, it looks at stop. A job's work is a few units for its own
// reads and, per group of options, one for the group and one per row its
// price sums.
func (d *dualPace) over(j *mjob, stop func() bool) bool {
	d.work += 4
	for gi := range j.groups {
		d.work += 1 + len(j.groups[gi].rows)
	}
	if d.work < dualWork {
		return false
	}
	d.work = 0
	return stop()
}

// profitEntry is a job of quickGreedy's pass (its index k in the free
// jobs) with its best Lagrangian profit h.
type profitEntry struct {
	k int
	h float64
}

// before reports whether e comes before o in quickGreedy's order:
// decreasing profit (cmp.Compare's order of floats, NaN last), ties broken
// by increasing index. No two entries are equal, so the order is total.
func (e profitEntry) before(o profitEntry) bool {
	return cmp.Less(o.h, e.h) || !cmp.Less(e.h, o.h) && e.k < o.k
}

// profitOrder yields entries in quickGreedy's order (before) one at a
// time: a binary heap, each entry pushed as the pass computing the
// profits reaches its job (a push costs a comparison or two on average,
// at most one per level), each next taken in time logarithmic in the
// entries. Unlike a sort of every entry (0.7-1.0 ms on 5,000 jobs, which
// nothing interrupted) or a heap built at once (0.1-0.2 ms on 10,000),
// the work comes a job at a time, between the passes' looks at the
// clock, and the pass that takes the entries pays only for those it
// takes: the order is the sorted order, however far the pass goes.
type profitOrder []profitEntry

// push adds e to the order.
func (h *profitOrder) push(e profitEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			return
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// next removes and returns the first entry left; ok is false once none is.
func (h *profitOrder) next() (e profitEntry, ok bool) {
	s := *h
	if len(s) == 0 {
		return profitEntry{}, false
	}
	e = s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	h.down(0)
	return e, true
}

// down restores the heap below i, whose entry may come after its children's.
func (h profitOrder) down(i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && h[r].before(h[c]) {
			c = r
		}
		if !h[c].before(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// sortEntryNanos is the cost of a sort per entry and level (n·log2 n of
// them) of the search's sorts by comparison: 5,000 of quickGreedy's
// entries took 0.7-1.0 ms of CPU (about 16 ns), with a margin.
const sortEntryNanos = 20

// sortCost is the estimated cost, in nanoseconds, of sorting n entries: a
// sort cannot be interrupted, so the search sizes one before it starts
// (clock.affords).
func sortCost(n int) int { return sortEntryNanos * n * bits.Len(uint(n)) }
