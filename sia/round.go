package sia

import (
	"context"
	"log/slog"
	"time"
)

// Scheduler runs Sia's scheduling rounds with fixed Options. It holds no
// state between rounds (the host owns the snapshot, including each job's
// models), does no I/O and starts no goroutines (unless Options.Parallelism
// asks for them); Round is safe for
// concurrent use on distinct snapshots.
type Scheduler struct {
	opts Options
	edit MatrixEdit // see WithMatrixEdit
}

// New returns a Scheduler with the given options (nil = all defaults), or an
// error wrapping ErrInvalidInput when they are invalid.
func New(opts *Options) (*Scheduler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{opts: opts.WithDefaults()}, nil
}

// Options returns the scheduler's options with defaults filled in.
func (s *Scheduler) Options() Options { return s.opts }

// Round runs one scheduling round on the snapshot: it validates it, builds
// the goodput matrix (BuildMatrix), solves the allocation (Solve) and places
// it onto nodes (Place), and returns the plan. The same snapshot and options
// give the same plan (apart from Timings). On a ctx or solver deadline the
// plan uses the best allocation found and its Status is ilp.Feasible; when
// ctx expires while the matrix is built, the remaining jobs only keep their
// current allocation (Matrix.Partial). Placement is not interruptible (it
// takes milliseconds), so with a deadline the matrix and the solver stop
// early enough to leave it its time. Errors
// wrap ErrInvalidInput (bad snapshot) or ErrInfeasible (pinned jobs that do
// not fit together).
func (s *Scheduler) Round(ctx context.Context, snap Snapshot) (Plan, error) {
	o := &s.opts
	if ctx == nil {
		ctx = context.Background()
	}
	t0 := time.Now()
	var plan Plan
	cl, err := validateSnapshot(&snap, o)
	t1 := time.Now()
	plan.Timings.Validate = t1.Sub(t0)
	if err != nil {
		s.observe(Event{Stage: StageMatrix, Jobs: len(snap.Jobs), Duration: plan.Timings.Validate, Err: err})
		return Plan{}, err
	}
	// Placement and the plan are not interruptible: with a deadline, the
	// matrix and the solver stop early enough to leave them their time.
	work := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		work, cancel = context.WithDeadline(ctx, dl.Add(-placeReserve(len(snap.Jobs))))
		defer cancel()
	}
	m, err := buildMatrix(work, &snap, o, cl)
	t2 := time.Now()
	plan.Timings.Matrix = t2.Sub(t1)
	nopts := 0
	if m != nil {
		nopts = m.Options()
	}
	s.observe(Event{Stage: StageMatrix, Jobs: len(snap.Jobs), Options: nopts, Duration: plan.Timings.Matrix, Err: err})
	if err != nil {
		return Plan{}, err
	}
	if err := s.applyEdit(&snap, m); err != nil {
		return Plan{}, err
	}
	sol, err := solve(work, m, o)
	t3 := time.Now()
	plan.Timings.Solve = t3.Sub(t2)
	s.observe(Event{Stage: StageSolve, Jobs: len(snap.Jobs), Options: nopts, Status: sol.Status, Duration: plan.Timings.Solve, Err: err})
	if err != nil {
		return Plan{}, err
	}
	lay, err := place(&snap, m, sol)
	t4 := time.Now()
	plan.Timings.Place = t4.Sub(t3)
	s.observe(Event{Stage: StagePlace, Jobs: len(snap.Jobs), Options: nopts, Status: sol.Status, Evicted: len(lay.Evicted), Duration: plan.Timings.Place, Err: err})
	if err != nil {
		return Plan{}, err
	}
	assemble(&plan, &snap, m, sol, lay)
	plan.Timings.Total = time.Since(t0)
	if o.Logger != nil && o.Logger.Enabled(ctx, slog.LevelDebug) {
		o.Logger.LogAttrs(ctx, slog.LevelDebug, "sia round",
			slog.Int("jobs", len(snap.Jobs)), slog.Int("options", nopts),
			slog.String("status", sol.Status.String()), slog.Float64("objective", sol.Objective),
			slog.Float64("bound", sol.Bound), slog.Int("evicted", len(lay.Evicted)),
			slog.Int("unplaced", len(lay.Unplaced)), slog.Duration("total", plan.Timings.Total))
	}
	return plan, nil
}

// placeReserve is the time Round keeps for placement and the plan when ctx
// has a deadline: about 3 µs per job (measured at 2048 GPUs and 1500 jobs)
// plus a fixed half millisecond.
func placeReserve(jobs int) time.Duration {
	return 500*time.Microsecond + time.Duration(jobs)*3*time.Microsecond
}

func (s *Scheduler) observe(e Event) {
	if s.opts.Observer != nil {
		s.opts.Observer.Observe(e)
	}
}
