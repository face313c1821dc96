package ilp

import (
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/sia-sched/sia/internal/measure"
)

// AllocStep is the heap allocation a traced solve did in one step after
// a point of its CPU clock (TraceAllocs).
type AllocStep struct {
	Step  string
	CPU   time.Duration // the step's end, relative to the deadline
	Bytes uint64        // allocated since the previous step's end (or the point)
}

// TraceAllocs runs TraceSolve's solve (on the solving thread's CPU clock,
// deadline d after the call) and returns the bytes the solve allocated
// after the point from (relative to the deadline: −3 ms is 3 ms before
// it), per step, sampled at every look at the clock and at every step's
// end, and the garbage-collection cycles that started after it.
func TraceAllocs(p *Problem, d, from time.Duration, s *Settings) ([]AllocStep, uint64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	r0 := measure.Read()
	base := r0.Wall
	var startGCs uint64
	started := false
	var out []AllocStep
	last := uint64(0)
	sample := func(step string) {
		at := measure.Read().Since(r0) - d
		if at < from {
			return
		}
		metrics.Read(samples)
		b := samples[0].Value.Uint64()
		if !started {
			started, startGCs, last = true, samples[1].Value.Uint64(), b
		}
		if step != "" {
			out = append(out, AllocStep{step, at, b - last})
			last = b
		}
	}
	clock := func() time.Time {
		sample("")
		return base.Add(measure.Read().Since(r0))
	}
	now = clock
	defer func() { now = time.Now }()
	traceStep = sample
	defer func() { traceStep = nil }()
	ctx := &cpuContext{deadline: base.Add(d), now: clock}
	_, err := Solve(ctx, p, s)
	sample("end")
	metrics.Read(samples)
	gcs := uint64(0)
	if started {
		gcs = samples[1].Value.Uint64() - startGCs
	}
	return out, gcs, err
}
