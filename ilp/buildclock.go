package ilp

import (
	"math/bits"
	"time"
)

// buildOver accounts for building job i and reports whether buildModel
// must stop before it (the clock's buildEnd has passed). The work of a job
// is its options times the rows each may use (its type's and the quotas
// covering the job): it looks at the clock once every buildChunk units,
// so that jobs under thousands of quotas are timed by what they cost, and
// jobs of a few options cost no look each. A job of bigJobOptions
// options or more is not started unless its build (jobNanos) fits before
// buildEnd: one job of 200,000 options took 80-110 ms to build, all of it
// past a 5 ms deadline.
func (b *builder) buildOver(clk *clock, i int, work *int) bool {
	n := len(b.p.Jobs[i].Options)
	if *work += (n + 8) * (1 + len(b.jobQuotas[i])); *work < buildChunk && n < bigJobOptions {
		return false
	}
	*work = 0
	if past(clk.buildEnd) {
		return true
	}
	return n >= bigJobOptions && jobNanos(n, len(b.jobQuotas[i])) >= clk.buildEnd.Sub(now())
}

// fuseOver accounts for job i as buildOver does and, at a look at the
// clock, reports whether validateBuild's pass must stop building: its
// rest (job i's options and rest more) is no longer expected to end well
// before the deadline (fuseBefore).
func (b *builder) fuseOver(clk *clock, i int, work *int, rest int) bool {
	n := len(b.p.Jobs[i].Options)
	if *work += (n + 8) * (1 + len(b.jobQuotas[i])); *work < buildChunk && n < bigJobOptions {
		return false
	}
	*work = 0
	return !fuseBefore(clk, n+rest)
}

// fusedNanos is about the most validating and building the model in one
// pass (validateBuild) takes per option, in nanoseconds, on a loaded
// machine (about 100 at a load of 10 to 15 on two cores).
const fusedNanos = 200

// fuseBefore reports whether validateBuild's pass over a problem of n
// options is expected to end well before the clock's deadline (none
// counts as far): its time (fusedNanos) with half as much again to spare.
// A pass the deadline stopped would leave the jobs after it
// unvalidated, and the solve would fall back to the pins and the warm
// start, where validating every job first, then building the model until
// buildEnd, leaves a partial model with a finite bound: the pass asks
// again at each look at the clock (fuseOver), and validates the rest
// first when the answer changes.
func fuseBefore(clk *clock, n int) bool {
	return !noFuse && (clk == nil || time.Duration(n*fusedNanos*3/2) < clk.deadline.Sub(now()))
}

// noFuse, set by tests, turns validateBuild's single pass off.
var noFuse bool

// buildChunk is the build's work between two looks at the clock: at about
// 100 ns a unit, some 50 µs. A look every 128 units (a job of 40 options
// under two quotas) cost a fifth of the build on the thread CPU clock,
// whose reading is a system call.
const buildChunk = 1 << 9

// bigJobOptions is the number of options from which a job's build is timed
// before it starts (see buildOver).
const bigJobOptions = 1 << 12

// jobNanos is about the time building one job of n options under q quotas
// takes: sorting its options (n log n), and testing each against its rows.
func jobNanos(n, q int) time.Duration {
	return time.Duration(n*modelNanos*(2+bits.Len(uint(n))/8) + n*q*quotaNanos)
}

// quotaNanos is about the time the build takes per option and quota row it
// tests, in nanoseconds.
const quotaNanos = 4

// The build's setup (the jobs' quota lists, the per-type quota tables,
// the rows and the pins' row usage) does not look at the clock; its cost
// is estimated by its parts, in nanoseconds: per job (a few cache misses
// each, right after the validation has read every option: 95 ns on the
// corpus's 1,000-job rounds, 22 on 10,000 jobs of one option), per entry
// of the quotas' job lists (10 on 3,000 jobs under 30 nested quotas), per
// quota (its row and its type tables: 5,000 quotas of one job each took
// 1.7 ms, about 300 each) and per GPU type (60 types: 77 µs). Measured
// least of 3 on the solving thread's CPU at a load of 3-4; each constant
// is about twice that. (One rate of 400 ns per job and quota entry
// overestimated the corpus's setups four to six times, and a solve whose
// validation ended just before the deadline fell back to the pins and
// the warm start.)
const (
	setupJobNanos   = 200
	setupEntryNanos = 30
	setupQuotaNanos = 600
	setupTypeNanos  = 3000
)

// setupAffordable reports whether the build's setup (setupCost) fits
// before the clock's buildEnd. It is sized before it starts: a validation
// that ended past the deadline on a problem of thousands of quotas
// started it anyway, and the solve ended 4-7 ms past a 1 ms deadline
// (allowed 2 ms).
func setupAffordable(clk *clock, p *Problem) bool {
	return clk == nil || setupCost(p) < clk.buildEnd.Sub(now())
}

// setupCost is the build's setup time expected for p (see setupJobNanos).
func setupCost(p *Problem) time.Duration {
	entries := 0
	for qi := range p.Quotas {
		entries += len(p.Quotas[qi].Jobs)
	}
	return time.Duration(setupJobNanos*len(p.Jobs) + setupEntryNanos*entries + setupQuotaNanos*len(p.Quotas) + setupTypeNanos*len(p.Capacity))
}
