package sia

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/sia-sched/sia/ilp"
)

// The deadline contract of Round (see Scheduler.Round): the steps that can
// be interrupted (matrix, solve) stop early enough to leave the steps that
// cannot (placement, the plan) the time they are measured to need, and a
// round out of time still admits queued jobs greedily.

// Measured costs (BenchmarkRoundDeadlineSweep, one core of an AMD EPYC
// shared with other work), with a safety factor of about two.
const (
	// rowCostPerType is the time one full matrix row takes per GPU type
	// (about 6.5 µs measured on the paper's three types).
	rowCostPerType = 12 * time.Microsecond
	// keepCostPerJob is the time a running job's current-configuration row
	// takes with its goodput predicted (built even when the round is out
	// of time), bareCostPerJob without (rowBare, built by bareRow in the
	// common case: 0.33 µs of CPU per running job on the 8,000-GPU fleet of
	// examples/round-deadline, 0.67 µs by the paper's steps, rowSteps;
	// least of 30 passes over its 2,000 running jobs).
	keepCostPerJob = 4 * time.Microsecond
	bareCostPerJob = 700 * time.Nanosecond
	// placeCostPerJob, placeCostPerStart and placeCostFixed size the time
	// kept for placement and the plan (placeReserve) by the work placement
	// will do rather than by the job count alone: a job that keeps its GPUs
	// costs little (about 1 µs of CPU per job measured with the greedy
	// allocation and the decisions, 2,504 jobs on 2,048 GPUs and 4,166 on
	// 8,192 alike: BenchmarkRoundFloor; placement alone 0.6–0.8 µs per job
	// on the 5,000-job fleets of examples/round-deadline), a request placed
	// anew (a start,
	// best fit and the evictions it may cause) several times that: at a
	// 100 ms deadline, rounds starting 1,500 of 2,500 jobs spent 7–17 ms
	// of CPU past D in placement with a reserve of 2 µs per job
	// (examples/round-deadline). Placement past its share of the deadline
	// stops evicting (roundClock), so an estimate too low costs the
	// placement's quality, not the contract. Listing the GPUs a start takes
	// cannot be cut short, and on nodes of thousands of GPUs it dominates
	// (about 100 ns of CPU per GPU placed anew: 424 starts on 930,000 GPUs
	// took 100 ms, TestProbeHugeNodes), so the free GPUs, which bound the
	// GPUs starts may take, are charged placeCostPerGPU each; the per-start
	// cost is the rest (1.2–1.4 µs measured on the 5,000-job fleets,
	// BenchmarkPlaceFleet).
	placeCostPerJob   = 1200 * time.Nanosecond
	placeCostPerStart = 3 * time.Microsecond
	placeCostPerGPU   = 100 * time.Nanosecond
	placeCostFixed    = 500 * time.Microsecond
	// matrixShare is the share of the time left after validation that the
	// matrix may use when it cannot be built in full: the solver gets the
	// rest.
	matrixShare = 0.6
)

// roundClock is a round's deadline D and the times after it by which its
// steps that are not interrupted at D stop their optional work, as shares
// of the contract's allowance S = ilp.Slack(D − call) (the same shares as
// ilp.Solve's): the running jobs' current configurations are valued (their
// goodput predicted) until D + S/4, or until placement must start when that
// is earlier (leavePlacement), and kept bare after it; placement stops
// evicting and re-packing at D + S/2 and places the rest on free GPUs
// only; the decisions and their reasons take the rest. Validation is not
// interrupted: it is linear in the snapshot (about a microsecond per job)
// and no plan can be made of a snapshot not known to be valid.
type roundClock struct {
	now      func() time.Time
	deadline time.Time // zero: none
	keepEnd  time.Time
	placeEnd time.Time
	slack    time.Duration // S: the contract's allowance past the deadline
}

// newRoundClock returns the clock of a round called at start under ctx
// (already given its RoundTimeout); now is the time source (time.Now
// outside tests).
func newRoundClock(ctx context.Context, start time.Time, now func() time.Time) *roundClock {
	c := &roundClock{now: now}
	dl, ok := ctx.Deadline()
	if !ok {
		return c
	}
	c.deadline = dl
	slack, at := ilp.Slack(max(dl.Sub(start), 0)), dl
	if at.Before(start) {
		at = start // a deadline already past at the call counts from the call
	}
	c.slack = slack
	c.keepEnd = at.Add(slack / 4)
	c.placeEnd = at.Add(slack / 2)
	return c
}

// leavePlacement moves keepEnd to t when t is earlier: the running jobs'
// predictions must not eat the time kept for placement (t is the deadline
// less placeReserve).
func (c *roundClock) leavePlacement(t time.Time) {
	if !c.keepEnd.IsZero() && t.Before(c.keepEnd) {
		c.keepEnd = t
	}
}

// past reports whether t is set and has passed.
func (c *roundClock) past(t time.Time) bool { return c != nil && !t.IsZero() && !c.now().Before(t) }

// placeContext returns the context placement runs under: ctx until the
// clock's placeEnd (D + S/2), already ended when the clock is past it.
func placeContext(ctx context.Context, c *roundClock) (context.Context, context.CancelFunc) {
	if c.placeEnd.IsZero() {
		return ctx, func() {}
	}
	if c.past(c.placeEnd) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx, cancel
	}
	return context.WithDeadline(ctx, c.placeEnd)
}

// keepCheckJobs is how many running jobs pass between two looks at the
// clock while their current configurations are valued (the first look is
// at the first running job, so a round out of time values none).
const keepCheckJobs = 64

// roundContext returns ctx with Options.RoundTimeout applied when ctx has
// no deadline.
func roundContext(ctx context.Context, o *Options) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || o.RoundTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, o.RoundTimeout)
}

// roundBudget is how a round with a deadline splits the time left after
// validation (see Scheduler.Round), sized before the matrix starts.
type roundBudget struct {
	// reserve is the time kept before D for placement and the plan:
	// placeCostFixed, placeCostPerJob per job and placeCostPerStart per
	// start placement may make (starts).
	reserve time.Duration
	// matrix is the matrix's time from the start of its build.
	matrix time.Duration
	// phased builds the matrix by priority (buildRows).
	phased bool
	// floorRows and capRows bound, per matrix worker, the queued jobs whose
	// cheap row a phased matrix builds: the first floorRows whatever the
	// deadline (a round out of time still admits some), up to capRows
	// while its time lasts, none beyond. capRows is what the time to D
	// affords (the rows, the solver's share and the starts they may make
	// all fit); math.MaxInt when every queued job's row fits.
	floorRows, capRows int
	// starts is the most queued jobs placement may start: at most one per
	// cheap row and per free GPU.
	starts int
	// free is, per GPU type, the GPUs the running jobs and reservations
	// leave (phased only): the cheap rows built whatever the deadline go to
	// queued jobs that fit them (cluster.mayStart).
	free map[string]int
	// bareFirst builds the running jobs' rows without their goodput first
	// (rowBare) and values them only after the queued rows, while the
	// matrix's time lasts: when valuing them first would leave fewer
	// queued rows than the time affords otherwise (starting queued jobs on
	// free GPUs comes before a kept job's batch size).
	bareFirst bool
}

// roundShape counts what the budget depends on: the running and queued
// jobs and the free GPUs (capacity less Reserved less the running jobs'
// GPUs, at least 0; a start takes at least one).
func roundShape(snap *Snapshot, cl *cluster) (running, queued, free int) {
	for t, c := range cl.capacity {
		free += max(c-snap.Reserved[t], 0)
	}
	if cl.counts.ok {
		for _, n := range cl.counts.held {
			free -= n
		}
		return cl.counts.running, len(snap.Jobs) - cl.counts.running, max(free, 0)
	}
	for i := range snap.Jobs {
		if cur := snap.Jobs[i].State.Current; cur.Running() {
			running++
			free -= cur.GPUs
		} else {
			queued++
		}
	}
	return running, queued, max(free, 0)
}

// timeLeft is the time from now to dl, ctx's deadline; none when ctx is
// cancelled: a cancelled round is out of time now, whatever its deadline
// (it still admits queued jobs on free GPUs, as one past its deadline).
func timeLeft(ctx context.Context, dl time.Time) time.Duration {
	if ctx.Err() != nil {
		return 0
	}
	return time.Until(dl)
}

// freeByType returns, per GPU type, the GPUs neither reserved nor held by
// a running job.
func freeByType(snap *Snapshot, cl *cluster) map[string]int {
	free := make(map[string]int, len(cl.capacity))
	for t, c := range cl.capacity {
		free[t] = c - snap.Reserved[t] - cl.counts.held[t]
	}
	if cl.counts.ok {
		return free
	}
	for i := range snap.Jobs {
		if cur := snap.Jobs[i].State.Current; cur.Running() {
			free[cur.Type] -= cur.GPUs
		}
	}
	return free
}

// placeReserve is the time Round keeps for placement and the plan, sized
// by the work placement may do: every job's request (placeCostPerJob) and,
// on top, starts requests placed anew (placeCostPerStart) and the free
// GPUs they may take (placeCostPerGPU). The running jobs' requests are
// charged as kept: most keep their GPUs, and a resize or move places a job
// the solver took GPUs from, which a start could not have used.
func placeReserve(jobs, starts, free int) time.Duration {
	return placeCostFixed + time.Duration(jobs)*placeCostPerJob + time.Duration(starts)*placeCostPerStart +
		time.Duration(free)*placeCostPerGPU
}

// planBudget splits left, the time to the deadline after validation. When
// the whole matrix is expected to fit in half the time left once
// placement's reserve (for every queued job that may start) and the running
// jobs' rows are set aside, it is built in full. Otherwise it is built by
// priority, and the queued jobs whose cheap row it builds (k in all) are
// those the time affords: k rows of the matrix take matrixShare of the time
// left after the reserve for k starts (at most one per free GPU) and the
// running jobs' rows, the solver gets the rest,
//
//	k · row ≤ matrixShare · (left − fixed − keep − min(k, free) · start),
//
// so that a round short of time values (and may start) as many queued jobs
// as it can place by D, and never more than its reserve was sized for.
// When the running jobs' rows with their goodput (keepCostPerJob) leave
// time for fewer than every queued job's row, they are built bare first
// (bareCostPerJob, roundBudget.bareFirst).
func planBudget(left time.Duration, snap *Snapshot, cl *cluster, o *Options) roundBudget {
	running, queued, free := roundShape(snap, cl)
	jobs, w := len(snap.Jobs), time.Duration(workers(o, len(snap.Jobs)))
	types := time.Duration(max(len(cl.types), 1))
	keep := time.Duration(running) * keepCostPerJob / w
	full := time.Duration(jobs) * types * rowCostPerType / w
	b := roundBudget{starts: min(queued, free), capRows: math.MaxInt}
	b.reserve = placeReserve(jobs, b.starts, free)
	if avail := left - b.reserve - keep; avail >= 2*full {
		b.matrix = avail
		return b
	}
	b.phased = true
	row := types * cheapRowCostPerType / w
	k := affordedRows(left-placeReserve(jobs, 0, free)-keep, row, placeCostPerStart, free)
	if k < queued {
		keep = time.Duration(running) * bareCostPerJob / w
		k, b.bareFirst = affordedRows(left-placeReserve(jobs, 0, free)-keep, row, placeCostPerStart, free), true
	}
	b.floorRows = lateCheapRows(free, len(cl.types), left, int(w))
	b.free = freeByType(snap, cl)
	if k < queued {
		b.capRows = max(b.floorRows, ceilDiv(k, int(w)))
		b.starts = min(queued, free, b.capRows*int(w))
	}
	b.reserve = placeReserve(jobs, b.starts, free)
	b.matrix = keep + time.Duration(matrixShare*float64(max(left-b.reserve-keep, 0)))
	return b
}

// affordedRows is the largest k ≥ 0 with k·row ≤ matrixShare·(avail −
// min(k, free)·start): the queued rows a matrix can value in its share of
// avail when each may start a job on a free GPU.
func affordedRows(avail, row, start time.Duration, free int) int {
	if avail <= 0 || row <= 0 {
		return 0
	}
	a, r, p := float64(avail), float64(row), float64(start)
	k := matrixShare * a / (r + matrixShare*p) // every row may start a job
	if k > float64(free) {
		// Beyond the free GPUs a row costs the matrix only.
		k = matrixShare * (a - float64(free)*p) / r
	}
	return int(min(k, float64(maxGPUsBound)))
}

// workers is the number of goroutines that build the matrix.
func workers(o *Options, jobs int) int {
	return min(max(o.Parallelism, 1), max(jobs/minJobsPerWorker, 1))
}

// matrixContext returns the context the matrix is built under: work (whose
// deadline is the round's less the placement reserve) ended after the
// budget's matrix time; the budget's row bounds go to the cluster view.
func matrixContext(work context.Context, b roundBudget, cl *cluster) (context.Context, context.CancelFunc) {
	if b.phased {
		cl.floorRows, cl.capRows, cl.bareFirst, cl.free = b.floorRows, b.capRows, b.bareFirst, b.free
	}
	if _, ok := work.Deadline(); !ok {
		return work, func() {} // no deadline, or cancelled: no time of its own
	}
	return context.WithTimeout(work, b.matrix)
}

// cheapRowCostPerType is the time a queued job's cheap row (its smallest
// configuration) takes per GPU type: 2.6–3 µs of CPU measured on the
// paper's three types (BenchmarkCheapRows), 3.2 µs and 5.1 µs on the
// 5,000-job fleets of examples/round-deadline with six and eight types
// (their node sizes give more configurations to try; the least of 15
// rounds, load 10). The rows built whatever the deadline
// (lateCheapRows) are sized by it, so it takes the largest; the others
// are built while the matrix's time lasts, where an estimate too high
// costs the solver's share, not the contract.
const cheapRowCostPerType = 5 * time.Microsecond

// lateCheapRows is the number of queued jobs per matrix worker whose cheap
// row is built even when the matrix is out of time, so that a round out of
// time still starts queued jobs on free GPUs: as many as the free GPUs
// could hold (each needs one), within a quarter of the deadline contract's
// allowance for a round with left time to its deadline (ilp.Slack), and
// at least minCheapRows. Sized before the matrix starts.
func lateCheapRows(free, types int, left time.Duration, workers int) int {
	budget := int(ilp.Slack(max(left, 0)) / 4 / (time.Duration(max(types, 1)) * cheapRowCostPerType))
	return max(minCheapRows, min(free, budget)/max(workers, 1))
}

// minCheap is the number of queued jobs per worker whose cheap row is
// built whatever the deadline.
func (c *cluster) minCheap() int { return max(minCheapRows, c.floorRows) }

// maxCheap is the most queued jobs per worker whose cheap row is built
// (the budget's capRows; no bound without one).
func (c *cluster) maxCheap() int {
	if c.capRows <= 0 {
		return math.MaxInt
	}
	return max(c.capRows, c.minCheap())
}

// cheapFirst returns, among the jobs [lo, hi) (one matrix worker's), the
// first limit queued jobs that may start on the free GPUs (mayStart),
// smallest first (by MinGPUs, or a rigid job's GPUs; ties in snapshot
// order), as the greedy allocation admits them: the jobs whose cheap row a
// round out of time builds first. A queue whose first jobs are too large,
// or cannot use the types with free GPUs, must not keep the others from
// starting round after round while the deadline is tight. The jobs are
// sorted as keys of size and index packed in one integer (no comparison
// function), the sizes capped where they cannot fit anyway.
func (c *cluster) cheapFirst(snap *Snapshot, o *Options, lo, hi, limit int) []int {
	free := c.freeByIndex()
	queued := hi - lo
	if c.counts.ok && lo == 0 && hi == len(snap.Jobs) {
		queued -= c.counts.running
	}
	keys := make([]uint64, 0, max(queued, 0))
	for i := lo; i < hi; i++ {
		j := &snap.Jobs[i]
		if j.State.Current.Running() || !c.mayStart(j, o, free) {
			continue
		}
		size := max(j.MinGPUs, 1)
		if j.Kind == Rigid {
			size = j.GPUs
		}
		// size ≤ the free GPUs of a type (mayStart) or, without a budget,
		// any count: capped at 2³¹ − 1, above any cluster's free GPUs in
		// practice, ties then kept in snapshot order.
		keys = append(keys, uint64(min(size, math.MaxInt32))<<32|uint64(uint32(i)))
	}
	out := make([]int, min(len(keys), max(limit, 0)))
	if !firstBySize(keys, out) {
		slices.Sort(keys)
		for k := range out {
			out[k] = int(uint32(keys[k]))
		}
	}
	return out
}

// firstBySize sets out to the job indices of the len(out) smallest keys
// (size<<32 | index, appended in index order, so each size's jobs come in
// index order), as slices.Sort would order them: a counting sort by size,
// stable, in time linear in the keys. It reports false, with out
// untouched, when the sizes are too large for one (above 4 per key).
func firstBySize(keys []uint64, out []int) bool {
	most := 0
	for _, k := range keys {
		most = max(most, int(k>>32))
	}
	if most > 4*len(keys)+64 {
		return false
	}
	at := make([]int32, most+2) // at[s+1]: keys of size s; then the first position of size s
	for _, k := range keys {
		at[k>>32+1]++
	}
	for s := 1; s < len(at); s++ {
		at[s] += at[s-1]
	}
	for _, k := range keys {
		s := k >> 32
		if p := at[s]; int(p) < len(out) {
			out[p] = int(uint32(k))
		}
		at[s]++
	}
	return true
}

// freeByIndex returns cluster.free by type index (nil without a budget).
func (c *cluster) freeByIndex() []int {
	if c.free == nil {
		return nil
	}
	out := make([]int, len(c.types))
	for k, t := range c.types {
		out[k] = c.free[t]
	}
	return out
}

// mayStart reports whether queued job j could start on the GPUs the running
// jobs leave free (free, cluster.free by type index, from the round's
// budget; nil: unknown): its smallest count (MinGPUs, a rigid job's GPUs)
// is within the free GPUs of a type it may use, and for a job that is not
// rigid within Options.MaxGPUsPerJob. The cheap rows a round out of time
// builds go to such jobs first: a queue whose first jobs are too large for
// the free GPUs (or for the cluster) must not keep the others from starting
// round after round.
func (c *cluster) mayStart(j *Job, o *Options, free []int) bool {
	if free == nil {
		return true
	}
	size := max(j.MinGPUs, 1)
	if j.Kind == Rigid {
		size = j.GPUs
	} else if size > o.MaxGPUsPerJob || j.MaxGPUs > 0 && size > j.MaxGPUs {
		return false
	}
	for k, t := range c.types {
		if size <= free[k] && (j.Types == nil || slices.Contains(j.Types, t)) {
			return true
		}
	}
	return false
}

// solverContext returns work with a deadline earlier by a tenth of the time
// left: the solver's own overshoot must fit the round's.
func solverContext(work context.Context) (context.Context, context.CancelFunc) {
	dl, ok := work.Deadline()
	if !ok {
		return work, func() {}
	}
	return context.WithDeadline(work, dl.Add(-time.Until(dl)/10))
}

// fitter tracks the GPUs and quota room left by a partial assignment of an
// allocation problem, so that options can be added one by one in O(quotas
// covering the job).
type fitter struct {
	p       *ilp.Problem
	free    map[string]int
	qfree   []int
	qOf     [][]int // quotas covering each job (not the AllJobs ones)
	qAll    []int   // AllJobs quotas
	assign  []int
	invalid bool // the pins alone break a row
}

func newFitter(p *ilp.Problem) *fitter {
	f := &fitter{p: p, free: make(map[string]int, len(p.Capacity)), qfree: make([]int, len(p.Quotas)),
		qOf: make([][]int, len(p.Jobs)), assign: make([]int, len(p.Jobs))}
	for t, c := range p.Capacity {
		f.free[t] = c - p.Reserved[t]
	}
	for q := range p.Quotas {
		f.qfree[q] = p.Quotas[q].Limit
		if p.Quotas[q].AllJobs {
			f.qAll = append(f.qAll, q)
			continue
		}
		for _, j := range p.Quotas[q].Jobs {
			if j >= 0 && j < len(p.Jobs) {
				f.qOf[j] = append(f.qOf[j], q)
			}
		}
	}
	for i := range f.assign {
		f.assign[i] = -1
	}
	return f
}

// fits reports whether option k of job i fits what is left.
func (f *fitter) fits(i, k int) bool {
	o := f.p.Jobs[i].Options[k]
	if o.GPUs > f.free[o.Type] {
		return false
	}
	for _, qs := range [2][]int{f.qOf[i], f.qAll} {
		for _, q := range qs {
			if f.p.Quotas[q].Counts(o) && o.GPUs > f.qfree[q] {
				return false
			}
		}
	}
	return true
}

// take assigns option k to job i.
func (f *fitter) take(i, k int) {
	o := f.p.Jobs[i].Options[k]
	f.free[o.Type] -= o.GPUs
	for _, qs := range [2][]int{f.qOf[i], f.qAll} {
		for _, q := range qs {
			if f.p.Quotas[q].Counts(o) {
				f.qfree[q] -= o.GPUs
			}
		}
	}
	f.assign[i] = k
}

// greedyAssignment returns a feasible assignment built greedily from warm
// (the jobs' current configurations): pins first, then the current
// configurations that still fit, then the waiting jobs, smallest first, each
// on its smallest option that beats waiting and fits. ok is false when the
// pins alone do not fit (the solver then reports why). It takes
// O(options · quotas per job) time.
func greedyAssignment(p *ilp.Problem, warm []int) (assign []int, ok bool) {
	f := newFitter(p)
	for i, j := range p.Jobs {
		if j.Pin >= 0 {
			if !f.fits(i, j.Pin) {
				return nil, false
			}
			f.take(i, j.Pin)
		}
	}
	for i, k := range warm {
		if k >= 0 && f.assign[i] < 0 && k < len(p.Jobs[i].Options) && f.fits(i, k) {
			f.take(i, k)
		}
	}
	// Waiting jobs by their smallest option that beats waiting.
	type cand struct{ job, opt, gpus int }
	var cands []cand
	for i, j := range p.Jobs {
		if f.assign[i] >= 0 {
			continue
		}
		best := -1
		for k, o := range j.Options {
			if !better(o.Value, j.Unallocated, p.Sense) {
				continue
			}
			if best < 0 || o.GPUs < j.Options[best].GPUs || o.GPUs == j.Options[best].GPUs && better(o.Value, j.Options[best].Value, p.Sense) {
				best = k
			}
		}
		if best >= 0 {
			cands = append(cands, cand{i, best, j.Options[best].GPUs})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.gpus - b.gpus })
	for _, c := range cands {
		if f.fits(c.job, c.opt) {
			f.take(c.job, c.opt)
			continue
		}
		// Its smallest option does not fit: any other option of the job
		// that fits and beats waiting.
		j := p.Jobs[c.job]
		for k, o := range j.Options {
			if better(o.Value, j.Unallocated, p.Sense) && f.fits(c.job, k) {
				f.take(c.job, k)
				break
			}
		}
	}
	return f.assign, true
}

// relaxedBound is a bound on the problem's optimum that ignores capacities
// and quotas: every job at its best option (or waiting, or its pin).
func relaxedBound(p *ilp.Problem) float64 {
	var s float64
	for _, j := range p.Jobs {
		if j.Pin >= 0 {
			s += j.Options[j.Pin].Value
			continue
		}
		b := j.Unallocated
		for _, o := range j.Options {
			if better(o.Value, b, p.Sense) {
				b = o.Value
			}
		}
		s += b
	}
	return s
}

// unknownBound is the trivial bound of a problem of the given sense.
func unknownBound(sense ilp.Sense) float64 {
	if sense == ilp.Maximize {
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// solveOrGreedy solves p under ctx, starting from warm (the current
// configurations). A round out of time still admits what it can: when ctx
// has expired before the solve, the greedy assignment is returned at once
// (with the relaxed bound); when the solver stops early, its incumbent is
// replaced by the greedy assignment if that is better. A solution the solver
// proved optimal is returned as it is.
func solveOrGreedy(ctx context.Context, p *ilp.Problem, warm []int, o *Options) (ilp.Solution, error) {
	greedy, ok := greedyAssignment(p, warm)
	if ctx.Err() != nil && ok {
		return ilp.Solution{Status: ilp.Feasible, Assignment: greedy, Objective: p.Objective(greedy), Bound: relaxedBound(p)}, nil
	}
	sol, err := ilp.Solve(ctx, p, &ilp.Settings{WarmStart: warm, MaxNodes: o.SolverMaxNodes})
	if err != nil || sol.Status == ilp.Optimal || !ok {
		return sol, err
	}
	if g := p.Objective(greedy); sol.Assignment == nil || better(g, sol.Objective, p.Sense) {
		sol.Assignment, sol.Objective = greedy, g
	}
	return sol, nil
}
