package ilp

// greedyMinWork is the work, in units of an option tested against one of
// its rows, that the late admission does before it looks at the clock:
// with its first greedyMinJobs jobs, but no more than this (64 jobs of 16
// options and 3 quotas). Without it, 64 jobs under 4,000 quotas each
// tested half a million rows after the deadline, whatever the clock.
const greedyMinWork = 1 << 12

// lateBudget counts the work of admitLate's greedy pass (see over).
type lateBudget struct {
	jobs, work, since int
}

// over accounts for the next job, of cost units (its options times the
// rows each may use), and reports whether the pass must stop before it:
// the clock's greedyEnd has passed. It looks at the clock once the first
// greedyMinJobs jobs or greedyMinWork units are done, then every 32 jobs
// and every greedyMinWork units. A nil clock never stops.
func (l *lateBudget) over(clk *clock, cost int) bool {
	if clk == nil {
		return false
	}
	n := l.jobs
	l.jobs++
	l.work += cost
	l.since += cost
	if n < greedyMinJobs && l.work <= greedyMinWork {
		return false
	}
	if n%32 != 0 && l.since < greedyMinWork {
		return false
	}
	l.since = 0
	return clk.greedyOver()
}
