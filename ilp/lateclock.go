package ilp

import (
	"slices"
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

// topEntries returns the k first of es in the order cmp (es sorted by it,
// cut to k), in time linear in len(es) for a small k: each entry is
// compared with the k-th kept, and only a better one is inserted.
func topEntries[E any](es []E, k int, cmp func(a, b E) int) []E {
	top := make([]E, 0, k+1)
	for _, e := range es {
		if len(top) == k && cmp(e, top[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, e, cmp)
		top = slices.Insert(top, i, e)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}
