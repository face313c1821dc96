package ilp

import (
	"context"
	"time"
)

// clock decides when the search stops: at the deadline (the context's, or
// Settings.TimeLimit's when earlier) or on cancellation. The search looks at
// it between steps and, through tick, inside every program whose work
// grows with capacity × jobs, so that no step runs long past the deadline.
//
// The root's dual bound and the first incumbents are essential: without
// them a stopped search has nothing useful to return. Before a deadline,
// the root's dual stops early enough to leave the greedy heuristics their
// time; when the deadline has already passed as the search starts, the
// dual may run until dualEnd, the greedy incumbent until greedyEnd, and
// building the Solution follows (see planLate).
type clock struct {
	ctx       context.Context
	called    time.Time // when Solve was called: the contract's D is deadline − called
	started   time.Time // when the search started (beginSearch)
	deadline  time.Time // zero: none
	essential time.Time // zero: none
	// The work that follows a deadline has its share of the allowance
	// Slack(D), each step ending at a fixed time after the deadline (zero
	// without one; see planLate): validating the problem, building the
	// model, the root's dual (essential, when the search starts late) and
	// the greedy incumbents, then the tail that builds the Solution, all
	// within a third of the allowance; the rest is for what the runtime
	// and the machine add (garbage-collection assists, page faults, the
	// process not being scheduled).
	validateEnd, buildEnd, dualEnd, greedyEnd time.Time
	work                                      int // work units (about a nanosecond each) since the last look
	stopped                                   bool
	sized                                     int // the nanoseconds asked of affords so far (for the tests' cost measures)
}

// now is the solver's clock: time.Now, except in the deadline tests, which
// run the solver on a clock that advances with the solving thread's CPU
// time (so that the work done after a deadline is measured exactly,
// whatever the machine's load).
var now = time.Now

// traceStep, when set (by tests), is called at the end of each step of a
// solve with the step's name: the deadline tests measure how much work
// each step does past the deadline.
var traceStep func(step string)

// trace reports the end of a step to traceStep.
func trace(step string) {
	if traceStep != nil {
		traceStep(step)
	}
}

// tickWork is the work between two looks at the time: about 50 µs.
const tickWork = 1 << 16

// Slack returns the deadline contract's allowance for a deadline d after
// the call: Solve returns within Slack(d) after its deadline (see Solve).
func Slack(d time.Duration) time.Duration {
	return max(2*time.Millisecond, d/10)
}

func newClock(ctx context.Context, start time.Time, limit time.Duration) *clock {
	c := &clock{ctx: ctx, called: start}
	if d, ok := ctx.Deadline(); ok {
		c.deadline = d
	}
	if limit > 0 && (c.deadline.IsZero() || start.Add(limit).Before(c.deadline)) {
		c.deadline = start.Add(limit)
	}
	c.planLate(0)
	c.beginSearch()
	return c
}

// The work after a deadline is planned on the solving thread's CPU, but
// the contract is judged on the wall clock: a solve that uses most of its
// allowance leaves nothing for the process not being scheduled (the
// corpus's 20 ms solves used up to 1.6 ms of CPU past D, and ended up to
// 2.2 ms past it at a load of 1.4). The steps after a deadline leave the
// scheduler at least half the allowance, and at least two thirds of it
// up to schedMargin (a few of the scheduler's time slices: a delay in
// time, not a share of D); they end within the rest (lateWorkBudget).
const schedMargin = 4 * time.Millisecond

// lateWorkBudget is the CPU time the steps after a deadline of allowance
// slack may use: a third of it (2 ms: 0.67 ms), or all but schedMargin of
// it when that is more, but no more than half (10 ms: 5 ms).
func lateWorkBudget(slack time.Duration) time.Duration {
	return min(slack/2, max(slack/3, slack-schedMargin))
}

// lateTailNanos is about what a solve does per job after its last step
// that looks at the clock (the greedy incumbents): the late admission's
// setup (the capacity the incumbent leaves, the quota index) and its work
// before its first look, the assignment and its objective, summed over
// every job's chosen option. Memory-bound, a few cache misses per job:
// 40-120 ns on the hard corpus's 2,500- to 5,000-job rounds (0.12-0.5 ms),
// measured on the solving thread's CPU at a load of 2-4.
const lateTailNanos = 100

// searchSetupNanos is about what the search does per job between the end
// of the build and the first look at the clock of the root's dual (the
// search's state, the empty incumbent and its check): 15-25 ns per job
// on the corpus's 5,000-job rounds (0.07-0.13 ms), 50 on a loaded
// machine.
const searchSetupNanos = 50

// planLate sets the ends of the steps that may follow a deadline, for a
// problem of n jobs: they share the allowance's lateWorkBudget less the tail
// that follows them (lateTailNanos per job, at most half of it) in fixed
// proportions, validation ending at a quarter of that time, the build at
// half (less the search's setup, searchSetupNanos per job, that follows
// it before the root's dual looks at the clock), the root's dual at three
// quarters and the greedy incumbents at its end. Without a deadline it
// does nothing.
func (c *clock) planLate(n int) {
	if c.deadline.IsZero() {
		return
	}
	// a deadline already past at the call counts from the call
	slack, at := Slack(c.deadline.Sub(c.called)), c.deadline
	if at.Before(c.called) {
		at = c.called
	}
	late := lateWorkBudget(slack)
	work := late - min(time.Duration(lateTailNanos*n), late/2)
	c.validateEnd = at.Add(work / 4)
	c.buildEnd = at.Add(work/2 - min(time.Duration(searchSetupNanos*n), work/4))
	c.dualEnd = at.Add(work * 3 / 4)
	c.greedyEnd = at.Add(work)
}

// beginSearch sets the essential time for a search starting now: a
// deadline that has passed by the time the search starts (after validating
// and building the model) leaves the root's dual until dualEnd; otherwise
// the dual ends at the deadline.
func (c *clock) beginSearch() {
	c.started = now()
	if c.deadline.IsZero() {
		return
	}
	c.essential = c.deadline
	if c.started.After(c.deadline) {
		c.essential = c.dualEnd
	}
}

// assemblyNanos is about the time, per job of the problem, that building
// the Solution takes after the search stops (the assignment, the
// objective summed over every job's chosen option, and again in the
// caller's values for a scaled problem): memory-bound, one or two cache
// misses per job, 130-230 ns on the corpus's 4,000- and 5,000-job rounds
// (0.5-1.15 ms past the deadline, measured on the solving thread's CPU
// at load 12).
const assemblyNanos = 200

// reserveAssembly ends the search early enough before the deadline for
// building the Solution of a problem of n jobs (assemblyNanos each, at
// most a quarter of the contract's allowance), so that the answer is
// returned about at the deadline rather than that long after it. It is
// called as the search starts (before beginSearch); a search that starts
// after the reserve's start keeps the deadline.
func (c *clock) reserveAssembly(n int) {
	if c.deadline.IsZero() {
		return
	}
	r := min(time.Duration(assemblyNanos*n), Slack(c.deadline.Sub(c.called))/4)
	if end := c.deadline.Add(-r); now().Before(end) {
		c.deadline = end
	}
}

// greedyOver reports whether the greedy incumbents, the last essential
// work after a deadline, must stop (greedyEnd has passed).
func (c *clock) greedyOver() bool { return past(c.greedyEnd) }

// past reports whether t is set and has passed.
func past(t time.Time) bool { return !t.IsZero() && !now().Before(t) }

// expired reports whether the search must stop (and from then on keeps
// reporting it).
func (c *clock) expired() bool {
	if !c.stopped && (c.ctx.Err() != nil || !c.deadline.IsZero() && !now().Before(c.deadline)) {
		c.stopped = true
	}
	return c.stopped
}

// tick accounts for n units of work and reports whether the search must
// stop, looking at the time once every tickWork units.
func (c *clock) tick(n int) bool {
	if c.stopped {
		return true
	}
	if c.work += n; c.work < tickWork {
		return false
	}
	c.work = 0
	return c.expired()
}

// essentialOver reports whether even essential work must stop: the context
// is cancelled or the essential time has passed.
func (c *clock) essentialOver() bool {
	return c.ctx.Err() == context.Canceled || !c.essential.IsZero() && !now().Before(c.essential)
}

// affords reports whether work that cannot be interrupted, of about n
// nanoseconds (the knapsack programs count a nanosecond per byte of the
// tables they allocate and clear), fits in the time left before the
// deadline. Such work is sized before it starts: it is skipped when the
// clock cannot afford it.
func (c *clock) affords(n int) bool {
	c.sized += n
	if c.stopped {
		return false
	}
	return c.deadline.IsZero() || time.Duration(n) < c.deadline.Sub(now())
}

// short reports whether less than d is left before a deadline that has not
// passed yet.
func (c *clock) short(d time.Duration) bool {
	if c.deadline.IsZero() {
		return false
	}
	left := c.deadline.Sub(now())
	return left > 0 && left < d
}
