package sia

import (
	"context"
	"log/slog"
	"time"
)

// Scheduler runs Sia's scheduling rounds with fixed Options. It holds no
// state between rounds that a plan depends on (the host owns the snapshot,
// including each job's models; it keeps only placement's storage for
// later rounds), does no I/O and starts no goroutines (unless
// Options.Parallelism asks for them); Round is safe for concurrent use on
// distinct snapshots.
type Scheduler struct {
	opts Options
	edit matrixEdit       // see WithGoodputEdit
	now  func() time.Time // the round clock's time source (nil: time.Now; tests inject one)
	// place keeps the placement step's state for the next round (plan.go;
	// shared by the schedulers withMatrixEdit derives).
	place *placeCache
	// noLean keeps every round on the standard path (tests compare the
	// lean round with it).
	noLean bool
}

// New returns a Scheduler with the given options (nil = all defaults), or an
// error wrapping ErrInvalidInput when they are invalid.
func New(opts *Options) (*Scheduler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Scheduler{opts: opts.WithDefaults(), place: &placeCache{}}, nil
}

// Options returns the scheduler's options with defaults filled in.
func (s *Scheduler) Options() Options { return s.opts }

// Round runs one scheduling round on the snapshot: it validates it, builds
// the goodput matrix (paper §3.3), solves the allocation exactly (package
// ilp, §3.3), places it onto nodes (package placement, §3.4), starts
// waiting jobs on the GPUs the per-pool charges left idle (the fill step,
// see the package doc and Plan.Status), and returns the plan. The same snapshot and options
// give the same plan as long as the round is not cut
// short by its deadline. Errors wrap ErrInvalidInput (bad snapshot) or
// ErrInfeasible (pinned jobs that do not fit together).
//
// # Deadline
//
// A round always has a deadline D: ctx's, or Options.RoundTimeout after the
// call (default DefaultRoundTimeout, 5 s) when ctx has none. Round is built
// to return by D + S, S = max(2 ms, 10 % of the time to D) (ilp.Slack), with
// a valid plan (no GPU given twice, pins kept, bounds and excluded types
// respected), provided D leaves the round its floor: the work it does
// whatever the deadline, sized before it starts and linear in the snapshot
// — validating the snapshot (never cut short: no plan is made of a snapshot
// not known to be valid), keeping every running job's configuration, the
// greedy allocation, placing onto free GPUs and the decisions: about
// 1.5–2 µs of CPU per job on one core (3.8–4.6 ms for 2,504 jobs on 2,048
// GPUs and 6.3–7.1 ms for 4,166 jobs on 8,192 GPUs in BenchmarkRoundFloor,
// 6–9 ms for 5,000 jobs on 8,000–16,000 GPUs of six to eight types in
// examples/round-deadline). A deadline closer than the floor is overshot
// by at most the floor.
//
// When the time left to D + S after validation is less than that floor
// (its estimate from the measured costs: the running jobs' bare rows, the
// queued jobs' cheap rows built whatever the deadline and placement's
// reserve), the round takes a lean path that does only what a round out
// of time must do: every running job keeps its allocation and GPUs exactly
// (a Keep decision kept without a prediction, as the standard path's
// round out of time gives it: its row is one entry worth N_min, with no
// batch size; pinned jobs stay pinned), with no solver and no placement;
// the queued jobs the standard path values first (the smallest that fit
// the free GPUs) get their cheap rows and start on the GPUs the kept jobs
// leave free by the fill step (each on its smallest valid configuration of
// a type it may use, placed with exactly that shape, quotas and
// reservations counted with the kept jobs' GPUs), as many as the time
// left affords and at least the standard floor's; every other job waits
// with its reason (ReasonDeadline, or the reason known without its row).
// Its plan reads as a standard plan out of time: StatusFeasible, Bound
// ±Inf (the matrix is partial), Objective the kept jobs' values (N_min
// each, raised to p) and the started jobs' plus λ for the others. A
// snapshot with a running job that would not simply keep on the standard
// path (its current entry no longer offered — a type it may no longer
// use, a shape outside its bounds — dominated by waiting, spanning node
// sizes, or its GPUs beyond a type's capacity less Reserved or a quota's
// Limit) takes the standard path, as does every round of a scheduler
// with a goodput edit (WithGoodputEdit), whose values the lean path does
// not compute. The lean round allocates nothing per job. Its floor,
// measured on the 5,000-job fleets of examples/round-deadline (thread CPU
// of a round out of time, BenchmarkFleetFloor, 2.7–3.0 MB per round, of
// which the decisions 0.8 MB): 3.6–4.9 ms on the 8,000-GPU fleet and
// 3.6–6.0 ms on the 16,000-GPU one at a load of 2–2.6 on two cores,
// depending on how much of the snapshot the caches hold (more on a loaded
// machine, where other processes evict it between the round's passes over
// it). Of it, validation and the rows take 2.4–4.3 ms; the standard path's
// floor is 8–9 ms. With Options.Parallelism 2 validation's checks of each
// job, the kept entries and the cheap rows run on two goroutines and the
// round's own thread spends 2.5–4.0 ms, which shortens the round only
// where a second core is idle. At 5,000 jobs a 5 ms deadline is
// therefore met or overshot by about that floor less D: in
// examples/round-deadline, whose rounds each start after a collection and
// alternate two snapshots, Round ended at most 0.87 ms past D in four runs
// of ten rounds at a load of 2.4–2.7 (the previous floor: 0.45–4.0 ms
// in the same runs), and is later by what it is not scheduled on a loaded
// machine.
// The solver (ilp.Solve) keeps the contract on its
// own, its validation and model included. On a machine whose cores are
// shared the tail is longer by what the round is not scheduled. Memory is
// linear in the snapshot (jobs × configurations, nodes × GPUs).
//
// Time is spent by priority, on a budget set before the matrix starts
// (sized by measured per-row costs). When the whole matrix does not fit in
// half of the time left, the matrix is built in three passes, each stopping
// at the deadline: every running job's current configuration, the queued
// jobs' smallest valid configuration per type, then the full rows (the jobs
// whose row was cut short and that get no GPUs say ReasonDeadline). The
// queued jobs valued are first the smallest that fit the free GPUs (a few
// per matrix worker, whatever the deadline, so that a queue headed by jobs
// that cannot start does not keep the others waiting), then the others in
// snapshot order, as many as the time affords:
// their rows take 60 % of the time left once placement's reserve and the
// running jobs' rows are set aside, the solver the rest, and placement's
// reserve is sized for the starts they may make (at most one per valued
// row and per free GPU), so that a round short of time starts as many jobs
// as it can place by D. When valuing the running jobs' current
// configurations would cost queued rows, they are kept without a
// prediction first and valued after the queued rows while time lasts.
// The solver stops a tenth of its time before the deadline, placement gets
// the time it is measured to need (per job, per start, and per free GPU a
// start may take: listing the GPUs of a plan cannot be cut short). The steps
// that run past D have shares of S, as
// ilp.Solve's: the running jobs' current configurations are valued (their
// goodput predicted, every 64 jobs the clock is read) until D + S/4, or
// until placement must start to end by D when that is earlier, and
// are kept without a prediction after it (the same allocation: a row of one
// entry is worth N_min; such a Keep decision carries no batch size, see
// Decision.LocalBatch); placement evicts and re-packs until D + S/2 and then
// places what is left on free GPUs only (placement.PlaceContext): a job it
// could not place keeps its current allocation where it can, or waits with
// ReasonDeadline. The fill step runs until D + S/2 as well: it scans as many
// waiting jobs' entries as the time left affords (sized before it starts),
// none once that time has passed, and the bound of a filled plan is solved
// for only with time left before D. A round out of time still admits what it can: its
// allocation is the better of the solver's incumbent and a greedy one that
// keeps every running job that fits and starts waiting jobs, smallest first,
// on free GPUs — a tight deadline never freezes the cluster. Such a plan's
// Status is StatusFeasible (never StatusOptimal unless proven on the full matrix)
// and its Bound a valid bound of the optimum (±Inf when the matrix is
// partial: the truncated matrix bounds nothing).
func (s *Scheduler) Round(ctx context.Context, snap Snapshot) (Plan, error) {
	o := &s.opts
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := roundContext(ctx, o)
	defer cancel()
	t0 := time.Now()
	clk := newRoundClock(ctx, t0, s.clockNow())
	var plan Plan
	cl, err := validateSnapshot(&snap, o, true)
	t1 := time.Now()
	if err != nil {
		s.observe(Event{Stage: StageMatrix, Jobs: len(snap.Jobs), Duration: t1.Sub(t0), Err: err})
		return Plan{}, err
	}
	cl.clk = clk
	if !s.noLean && s.edit == nil && takeLean(ctx, clk, &snap, cl, o) {
		if lean, ok, err := s.leanRound(ctx, &snap, cl, clk); ok {
			return lean, err
		}
	}
	// With a deadline, the matrix and the solver stop early enough to leave
	// placement and the plan their time.
	work := ctx
	var b roundBudget
	if dl, ok := ctx.Deadline(); ok || ctx.Err() != nil {
		b = planBudget(timeLeft(ctx, dl), &snap, cl, o)
		if ok {
			var cancel context.CancelFunc
			work, cancel = context.WithDeadline(ctx, dl.Add(-b.reserve))
			defer cancel()
			clk.leavePlacement(dl.Add(-b.reserve))
		}
	}
	mctx, mcancel := matrixContext(work, b, cl)
	m, err := buildMatrix(mctx, &snap, o, cl, b.phased)
	mcancel()
	t2 := time.Now()
	nopts := 0
	if m != nil {
		nopts = m.Offered()
	}
	s.observe(Event{Stage: StageMatrix, Jobs: len(snap.Jobs), Offered: nopts, Duration: t2.Sub(t1), Err: err})
	if err != nil {
		return Plan{}, err
	}
	if err := s.applyEdit(&snap, m); err != nil {
		return Plan{}, err
	}
	sctx, scancel := solverContext(work)
	sol, err := solve(sctx, m, o)
	scancel()
	t3 := time.Now()
	s.observe(Event{Stage: StageSolve, Jobs: len(snap.Jobs), Offered: nopts, Status: sol.Status, Duration: t3.Sub(t2), Err: err})
	if err != nil {
		return Plan{}, err
	}
	pctx, pcancel := placeContext(ctx, clk)
	lay, err := placeWith(pctx, s.place, &snap, m, sol)
	pcancel()
	t4 := time.Now()
	s.observe(Event{Stage: StagePlace, Jobs: len(snap.Jobs), Offered: nopts, Status: sol.Status, Evicted: len(lay.Evicted), Duration: t4.Sub(t3), Err: err})
	if err != nil {
		return Plan{}, err
	}
	lay.nodeAt, lay.shapes = cl.nodeAt, shapeValuer{snap: &snap, o: o, cl: cl}
	lay.fill = fillPlan(ctx, clk, &snap, m, sol, &lay, o, t3.Sub(t2))
	assemble(&plan, &snap, m, sol, lay, o)
	if o.Logger != nil && o.Logger.Enabled(ctx, slog.LevelDebug) {
		o.Logger.LogAttrs(ctx, slog.LevelDebug, "sia round",
			slog.Int("jobs", len(snap.Jobs)), slog.Int("options", nopts),
			slog.String("status", sol.Status.String()), slog.Float64("objective", sol.Objective),
			slog.Float64("bound", sol.Bound), slog.Int("evicted", len(lay.Evicted)),
			slog.Int("unplaced", len(lay.Unplaced)), slog.Duration("total", time.Since(t0)))
	}
	return plan, nil
}

// clockNow returns the round clock's time source.
func (s *Scheduler) clockNow() func() time.Time {
	if s.now != nil {
		return s.now
	}
	return time.Now
}

func (s *Scheduler) observe(e Event) {
	if s.opts.Observer != nil {
		s.opts.Observer(e)
	}
}
