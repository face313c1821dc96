package ilp

import (
	"context"
	"math"
	"runtime"
	"time"

	"github.com/sia-sched/sia/internal/measure"
)

// This file exports to the package's external tests what they need to
// measure a solve's work past its deadline on the solving thread's CPU
// clock (measure.ThreadCPU), which does not depend on the machine's load.

// StepCPU is one step of a traced solve: its name and the solving
// thread's CPU time at its end, relative to the deadline (negative:
// before it).
type StepCPU struct {
	Step string
	CPU  time.Duration
}

// ThreadCPUClock reports whether TraceSolve can read the solving thread's
// CPU time on this system.
const ThreadCPUClock = measure.ThreadCPUAvailable

// TraceSolve runs Solve on a locked OS thread whose clock (the solver's
// now) advances with the thread's CPU time, with a deadline d after the
// call on that clock (d <= 0: an expired one): a context deadline, or
// s.TimeLimit when it is set. It returns the CPU time the thread spent
// after the deadline (0 when it returned before), the end of each step on
// the same clock (see trace) and the solution. On that clock a machine's
// load does not change what the solver does nor the measure: a thread
// that does not get the processor does no work and its clock stands still.
func TraceSolve(p *Problem, d time.Duration, s *Settings) (time.Duration, []StepCPU, Solution, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// (a collection the test's own garbage would start during the solve
	// charges its assists to this thread: start from a collected heap, as
	// examples/ilp-deadline does before each solve)
	runtime.GC()
	r0 := measure.Read()
	base := r0.Wall
	clock := func() time.Time { return base.Add(measure.Read().Since(r0)) }
	now = clock
	defer func() { now = time.Now }()
	var steps []StepCPU
	traceStep = func(step string) { steps = append(steps, StepCPU{step, measure.Read().Since(r0)}) }
	defer func() { traceStep = nil }()
	var ctx context.Context = &cpuContext{deadline: base.Add(d), now: clock}
	dl := base.Add(d)
	if s != nil && s.TimeLimit > 0 {
		ctx, dl = context.Background(), base.Add(s.TimeLimit)
	}
	sol, err := Solve(ctx, p, s)
	end := clock()
	for i := range steps {
		steps[i].CPU -= dl.Sub(base)
	}
	return max(0, end.Sub(dl)), steps, sol, err
}

// cpuContext is a context whose deadline is on the CPU clock now: its Err
// is DeadlineExceeded from then on. It is never cancelled otherwise (Done
// is nil; the solver looks at Err).
type cpuContext struct {
	deadline time.Time
	now      func() time.Time
}

func (c *cpuContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *cpuContext) Done() <-chan struct{}       { return nil }
func (c *cpuContext) Value(any) any               { return nil }
func (c *cpuContext) Err() error {
	if !c.now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// NewtonDualExcess returns how far above the dual's minimum (the
// cutting-plane method's, run to 1e-10) the smoothed Newton method
// (newtonDual from λ = 0, unpolished) ends within passes passes over the
// jobs, relative to the minimum, and the passes it made.
func NewtonDualExcess(p *Problem, passes int) (float64, int) {
	m := newModel(p)
	free := m.allJobs()
	_, fc := m.minimizeDual(free, m.cap, nil, 1e-10*m.scale, 600)
	made := 0
	newtonTrace = func(int, float64, float64, time.Duration) { made++ }
	defer func() { newtonTrace = nil }()
	_, f, _ := m.newtonDual(free, m.cap, nil, passes, nil, nil)
	return (f - fc) / math.Max(1, math.Abs(fc)), made
}

// NewtonBound returns the bound of newtonDual from λ = 0 (unpolished, at
// most passes passes) in the problem's objective units.
func NewtonBound(p *Problem, passes int) float64 {
	m := newModel(p)
	_, f, _ := m.newtonDual(m.allJobs(), m.cap, nil, passes, nil, nil)
	return p.Objective(append([]int(nil), m.pins...)) + m.sign*f
}

// NoFuse makes Solve validate every job before it builds the model (not
// in one pass, validateBuild) until the returned function is called.
func NoFuse() (restore func()) {
	noFuse = true
	return func() { noFuse = false }
}
