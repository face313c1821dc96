package sia

import (
	"context"
	"sync"
	"time"

	"github.com/sia-sched/sia/ilp"
)

// The lean round (see Scheduler.Round, "Deadline"): when the time left to
// D + S after validation is less than the standard path's floor (its work
// whatever the deadline, standardFloor), the round does only what a round
// out of time must do. Every running job keeps its allocation and GPUs
// exactly, as the standard path's out-of-time round decides for it (its
// bare kept row, worth N_min, no batch size; no solver, no placement), the
// queued jobs the standard floor would value first (cluster.cheapFirst)
// get their cheap rows and start on the GPUs the kept jobs leave free
// (the fill step: each placed with its evaluated shape, quotas and
// reservations counted by the GPUs held), and the others wait. A snapshot
// with a running job that would not simply keep on the standard path (a
// row bareRow does not cover, a current entry dominated by waiting or not
// offered, kept GPUs beyond a type's capacity less Reserved or a quota's
// Limit) takes the standard path.

// leanRestPerJob is the lean round's cost per job after its cheap rows
// (the allocation, the layout, the fill's count of the idle GPUs and the
// decisions with the waiting jobs' reasons): 1.2 ms least of 40 on the
// 5,000-job, 8,000-GPU fleet of examples/round-deadline (0.24 µs per
// job), with a safety factor of two. The cheap rows beyond the standard
// floor's stop that long before D.
const leanRestPerJob = 500 * time.Nanosecond

// standardFloor is the standard path's floor after validation, sized by
// planBudget's constants: the running jobs' bare rows, the cheap rows of
// the queued jobs valued whatever the deadline, and placement's reserve
// for the jobs and the starts those rows may make (the greedy allocation
// and the decisions are in placeCostPerJob).
func standardFloor(snap *Snapshot, cl *cluster, o *Options, left time.Duration) time.Duration {
	running, queued, free := roundShape(snap, cl)
	w := workers(o, len(snap.Jobs))
	types := time.Duration(max(len(cl.types), 1))
	rows := lateCheapRows(free, len(cl.types), left, w)
	starts := min(queued, free, rows*w)
	// The free GPUs the floor's starts may take are not charged: on
	// nodes of thousands of GPUs they would make every round lean, and
	// the standard path's placement past its share of S places its few
	// starts on free GPUs only.
	return time.Duration(running)*bareCostPerJob/time.Duration(w) + time.Duration(rows)*types*cheapRowCostPerType +
		placeReserve(len(snap.Jobs), starts, 0)
}

// takeLean reports whether a round on clock clk (under ctx) takes the lean
// path: it has a deadline, and the time left to D + S is less than the
// standard path's floor (none is left once ctx is cancelled but S).
func takeLean(ctx context.Context, clk *roundClock, snap *Snapshot, cl *cluster, o *Options) bool {
	if clk == nil || clk.deadline.IsZero() {
		return false
	}
	left := clk.deadline.Sub(clk.now())
	if ctx.Err() != nil {
		left = min(left, 0)
	}
	return left+clk.slack < standardFloor(snap, cl, o, max(left, 0))
}

// leanRound runs the lean round on a validated snapshot (cl, clk: its
// cluster view and clock). ok is false, with nothing done but reading the
// snapshot, when a running job would not simply keep its allocation on the
// standard path: the round then takes that path.
func (s *Scheduler) leanRound(ctx context.Context, snap *Snapshot, cl *cluster, clk *roundClock) (plan Plan, ok bool, err error) {
	o := &s.opts
	t1 := time.Now()
	var sc leanScratch
	m, lambda, ev, ok := leanKept(snap, o, cl, &sc)
	if !ok {
		return Plan{}, false, nil // m and sc dropped
	}
	if err := leanCheap(snap, o, cl, clk, m, lambda, ev, &sc); err != nil {
		s.observe(Event{Stage: StageMatrix, Jobs: len(snap.Jobs), Duration: time.Since(t1), Err: err})
		return Plan{}, true, err
	}
	t2 := time.Now()
	nopts := m.Offered()
	s.observe(Event{Stage: StageMatrix, Jobs: len(snap.Jobs), Offered: nopts, Duration: t2.Sub(t1)})
	sol := leanSolution(snap, m)
	s.observe(Event{Stage: StageSolve, Jobs: len(snap.Jobs), Offered: nopts, Status: sol.Status})
	lay := leanLayout(snap, m)
	lay.nodeAt, lay.gpus = cl.nodeAt, cl.gpus
	if !clk.deadline.IsZero() {
		// shapes of idle GPUs while the time to D lasts (on time.Now's clock, as fill reads it)
		lay.shapes = shapeValuer{snap: snap, o: o, cl: cl, stop: time.Now().Add(max(clk.deadline.Sub(clk.now()), 0))}
	}
	if filled := fillIdle(snap, m, sol, &lay, -1); len(filled) > 0 {
		lay.fill = fillOutcome{Filled: filled, Objective: planObjective(m, sol, &lay), Bound: sol.Bound}
	}
	s.observe(Event{Stage: StagePlace, Jobs: len(snap.Jobs), Offered: nopts, Status: sol.Status, Duration: time.Since(t2)})
	assemble(&plan, snap, m, sol, lay, o)
	plan.lean = true
	return plan, true, nil
}

// leanScratch is the lean round's matrix storage: the rows, one per job,
// the kept rows' entries (one per running job) and the cheap rows' entries,
// each allocated once per round at its final size.
type leanScratch struct {
	rows  []matrixRow
	kept  []matrixEntry
	cheap []matrixEntry
}

// rowsFor returns n rows of the storage (their contents stale: every row
// is written before it is read).
func (sc *leanScratch) rowsFor(n int) []matrixRow {
	if cap(sc.rows) < n {
		sc.rows = make([]matrixRow, n)
	}
	return sc.rows[:n]
}

// entriesFor returns *buf emptied, with room for n entries (a new array
// when it has less).
func entriesFor(buf *[]matrixEntry, n int) []matrixEntry {
	if cap(*buf) < n {
		*buf = make([]matrixEntry, 0, n)
	}
	return (*buf)[:0]
}

// leanKept builds the lean round's matrix with every running job's kept
// row as the standard path's out-of-time round builds it (rowBare: bareRow
// in the common case, the paper's steps for the others, such as rigid
// jobs) and every queued job's row empty, and reports whether every
// running job keeps its allocation as on the standard path's greedy
// allocation: its current entry is offered (or pinned), on one pool, and
// the kept entries fit every pool's capacity, reservation and quota as
// the allocation problem counts them (keptFit). A row the steps cannot
// build (an error) leaves the standard path to report it.
// It returns the evaluator it used (nil: none). The rows and the kept
// entries are sc's storage. With Options.Parallelism, contiguous ranges of
// the jobs are built on several goroutines (workers), each with its own
// entries, pools and evaluator: the same matrix for any number of them.
func leanKept(snap *Snapshot, o *Options, cl *cluster, sc *leanScratch) (*goodputMatrix, float64, *evaluator, bool) {
	m, k, lambda := matrixHeaderRows(snap, o, cl, sc.rowsFor(len(snap.Jobs)))
	m.Partial = true
	w := workers(o, len(snap.Jobs))
	if w == 1 {
		running, _, _ := roundShape(snap, cl)
		kr := keptRange{backing: entriesFor(&sc.kept, running), pools: make(keptPools, 0, 2*len(m.Types)+1)}
		ok := kr.build(snap, o, &k, cl, m, lambda, 0, len(snap.Jobs))
		sc.kept = kr.backing[:0] // grown by rowSteps's rows, if any
		if !ok {
			return nil, 0, nil, false
		}
		return m, lambda, kr.ev, keptFit(snap, m, kr.pools)
	}
	// Worker r's entries are its jobs' share of one array (at most one per
	// job: bareRow's; rowSteps's rows beyond it go to an array of their own).
	all := entriesFor(&sc.kept, len(snap.Jobs))[:len(snap.Jobs)]
	krs := make([]keptRange, w)
	var wg sync.WaitGroup
	for r := range krs {
		lo, hi := r*len(snap.Jobs)/w, (r+1)*len(snap.Jobs)/w
		krs[r] = keptRange{backing: all[lo:lo:hi], pools: make(keptPools, 0, 2*len(m.Types)+1)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			krs[r].ok = krs[r].build(snap, o, &k, cl, m, lambda, lo, hi)
		}()
	}
	wg.Wait()
	var ev *evaluator
	pools := krs[0].pools
	for r := range krs {
		if !krs[r].ok {
			return nil, 0, nil, false
		}
		if ev == nil {
			ev = krs[r].ev
		}
		if r > 0 {
			pools = append(pools, krs[r].pools...) // keptFit sums pools of one name
		}
	}
	return m, lambda, ev, keptFit(snap, m, pools)
}

// keptRange is one range of leanKept's jobs: its kept entries, the pools
// they count against and the evaluator of the rows bareRow does not cover
// (nil: none yet).
type keptRange struct {
	backing []matrixEntry
	pools   keptPools
	ev      *evaluator
	ok      bool
}

// build builds rows [lo, hi) of m as leanKept does and reports whether
// each running job among them keeps its allocation (its entry offered or
// pinned, on one pool), its entries charged to r.pools.
func (r *keptRange) build(snap *Snapshot, o *Options, k *ArtifactKnobs, cl *cluster, m *goodputMatrix, lambda float64, lo, hi int) bool {
	for i := lo; i < hi; i++ {
		j := &snap.Jobs[i]
		if !j.State.Current.Running() {
			m.Rows[i] = matrixRow{Job: j.ID, Index: i, Current: -1, Pin: -1, Restart: 1, Scale: 1, Unallocated: lambda, Partial: true}
			continue
		}
		var ok bool
		if r.backing, ok = bareRow(r.backing, snap, o, k, cl, m, lambda, i); !ok {
			if r.ev == nil {
				r.ev = newEvaluator()
			}
			var err error
			if r.backing, err = rowSteps(r.backing, snap, o, k, cl, r.ev, m, lambda, i, rowBare); err != nil {
				return false
			}
		}
		row := &m.Rows[i]
		if row.Current < 0 || row.spill != nil {
			return false
		}
		e := &row.Entries[row.Current]
		if e.Config.Spanning() || row.Pin < 0 && (e.Dropped || e.Dominated) {
			return false
		}
		r.pools.add(m, e)
	}
	return true
}

// keptPools are the pools the running jobs' kept entries count against
// (one per type and node size: few), each named once, with the GPUs
// charged to it: leanKept adds each kept entry as it builds its row, and
// fit checks them (keptFit).
type keptPools []keptPool

// keptPool is one pool of keptPools.
type keptPool struct {
	t    string
	r, n int
	name string
}

// of returns the position in ps of the pool of kept entry e (added if
// new) and the allocation problem's option for it.
func (ps *keptPools) of(m *goodputMatrix, e *matrixEntry) (ilp.Option, int) {
	c := &e.Config
	k := 0
	for k < len(*ps) && ((*ps)[k].r != c.NodeGPUs || (*ps)[k].t != c.Type) {
		k++
	}
	if k == len(*ps) {
		*ps = append(*ps, keptPool{t: c.Type, r: c.NodeGPUs, name: m.poolName(*c)})
	}
	return ilp.Option{Type: (*ps)[k].name, GPUs: e.charge()}, k
}

// add charges kept entry e to its pool.
func (ps *keptPools) add(m *goodputMatrix, e *matrixEntry) {
	o, k := ps.of(m, e)
	(*ps)[k].n += o.GPUs
}

// use returns the GPUs charged to the pool named name (pools of several
// node sizes may share a name).
func (ps keptPools) use(name string) int {
	n := 0
	for _, p := range ps {
		if p.name == name {
			n += p.n
		}
	}
	return n
}

// first reports whether ps[k] is the first of ps with its name.
func (ps keptPools) first(k int) bool {
	for _, p := range ps[:k] {
		if p.name == ps[k].name {
			return false
		}
	}
	return true
}

// keptFit reports whether the running jobs' current entries of m, each
// counting its charge against its pool (as the allocation problem counts
// them; pools: their sums, keptPools.add), fit every pool's capacity less
// its reservation, every reservation over a type of several pools, and
// every quota's Limit: the greedy allocation of the standard path then
// keeps them all.
func keptFit(snap *Snapshot, m *goodputMatrix, pools keptPools) bool {
	for k, p := range pools {
		if pools.first(k) && pools.use(p.name) > m.Capacity[p.name] {
			return false
		}
	}
	for t, r := range m.Reserved {
		ps := m.Pools[t]
		total, held := 0, 0
		for _, pl := range ps {
			total += m.Capacity[pl]
			held += pools.use(pl)
		}
		if held > total-r {
			return false
		}
	}
	for q := range m.Quotas {
		qt := &m.Quotas[q]
		sum := 0
		for _, i := range qt.Jobs {
			if !snap.Jobs[i].State.Current.Running() {
				continue
			}
			row := &m.Rows[i]
			if o, _ := pools.of(m, &row.Entries[row.Current]); qt.Counts(o) {
				sum += o.GPUs
			}
		}
		if sum > qt.Limit {
			return false
		}
	}
	return true
}

// leanCheap builds the cheap rows (rowCheap) of the queued jobs the
// standard floor values first (cluster.cheapFirst: the smallest that may
// start on the free GPUs): until as many as the standard floor's are not
// empty whatever the deadline (lateCheapRows per matrix worker, among the
// first cheapExamine times as many), then
// more until the rest of the round must start to end by D (leanRestPerJob
// per job), and none once the rows built need all the free GPUs (their
// smallest configurations' GPUs).
// ev is the evaluator to use (nil: a new one); the rows' entries are sc's
// storage. With Options.Parallelism the rows are built on several
// goroutines (cheapRows): the same rows for any number of them.
func leanCheap(snap *Snapshot, o *Options, cl *cluster, clk *roundClock, m *goodputMatrix, lambda float64, ev *evaluator, sc *leanScratch) error {
	return leanCheapOn(snap, o, cl, clk, m, lambda, ev, sc, workers(o, len(snap.Jobs)))
}

// leanCheapOn is leanCheap with its rows built on par goroutines.
func leanCheapOn(snap *Snapshot, o *Options, cl *cluster, clk *roundClock, m *goodputMatrix, lambda float64, ev *evaluator, sc *leanScratch, par int) error {
	_, queued, free := roundShape(snap, cl)
	if queued == 0 || free == 0 {
		return nil
	}
	cl.free = freeByType(snap, cl)
	left := max(clk.deadline.Sub(clk.now()), 0)
	w := workers(o, len(snap.Jobs))
	floor := lateCheapRows(free, len(cl.types), left, w) * w
	if ev == nil {
		ev = newEvaluator()
	}
	cr := cheapRows{snap: snap, o: o, k: o.knobs(), cl: cl, m: m, lambda: lambda,
		cands: cl.cheapFirst(snap, o, 0, len(snap.Jobs), max(cheapExamine*floor, free))}
	cr.backing = entriesFor(&sc.cheap, min(len(cr.cands), floor)*len(cl.types))
	end := clk.deadline.Add(-time.Duration(len(snap.Jobs)) * leanRestPerJob)
	// need: the admitted rows' smallest GPU counts; starts: the time the
	// fill may take to start them (placement's per-start and per-GPU
	// costs), which the rows beyond the floor's must leave before end.
	admitted, need, starts := 0, 0, time.Duration(0)
	stop := func(n int) bool {
		return need >= free || (admitted >= floor || n >= cheapExamine*floor) && clk.past(end.Add(-starts))
	}
	admit := func(i int) {
		if es := m.Rows[i].Entries; len(es) > 0 {
			admitted++
			least := es[0].Config.GPUs
			for e := range es {
				least = min(least, es[e].Config.GPUs)
			}
			need += least
			starts += placeCostPerStart + time.Duration(least)*placeCostPerGPU
		}
	}
	var err error
	if par <= 1 {
		err = cr.serial(ev, stop, admit)
		sc.cheap = cr.backing[:0] // grown past the floor's rows, if any
	} else {
		err = cr.parallel(ev, par, stop, admit)
	}
	return err
}

// cheapRows builds leanCheap's rows: the cheap rows of cands, in order,
// until stop says no more (stop(n) before the n-th; admit(i) counts each
// row built), their entries appended to backing.
type cheapRows struct {
	snap    *Snapshot
	o       *Options
	k       ArtifactKnobs
	cl      *cluster
	m       *goodputMatrix
	lambda  float64
	cands   []int
	backing []matrixEntry
}

// serial builds the rows one by one with ev.
func (cr *cheapRows) serial(ev *evaluator, stop func(int) bool, admit func(int)) error {
	for n, i := range cr.cands {
		if stop(n) {
			break // no more can start, or no time for more
		}
		var err error
		if cr.backing, err = buildRow(cr.backing, cr.snap, cr.o, &cr.k, cr.cl, ev, cr.m, cr.lambda, i, rowCheap); err != nil {
			return err
		}
		admit(i)
	}
	return nil
}

// cheapBatchPerWorker is the rows each goroutine of cheapRows.parallel
// builds per batch (a cheap row is a few µs: a batch of 8 is tens of µs,
// and the rows built past stop are few).
const cheapBatchPerWorker = 8

// parallel builds the rows in batches, each on par goroutines (contiguous
// shares, each with its own evaluator and entries; ev is the first's),
// then reads the batch in order as serial does: the rows past stop are
// emptied again (as leanKept leaves a queued job's row), an error is the
// first row's in order that serial would have built. The rows are those of
// serial whenever stop answers the same.
func (cr *cheapRows) parallel(ev *evaluator, par int, stop func(int) bool, admit func(int)) error {
	type worker struct {
		ev      *evaluator
		backing []matrixEntry
	}
	ws := make([]worker, par)
	for r := range ws {
		ws[r].ev = ev
		if r > 0 {
			ws[r].ev = newEvaluator()
		}
	}
	ws[0].backing = cr.backing
	batch := par * cheapBatchPerWorker
	errs := make([]error, batch)
	for lo := 0; lo < len(cr.cands); lo += batch {
		if stop(lo) {
			return nil
		}
		hi := min(lo+batch, len(cr.cands))
		var wg sync.WaitGroup
		for r := range ws {
			a, b := lo+r*(hi-lo)/par, lo+(r+1)*(hi-lo)/par
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := a; n < b; n++ {
					ws[r].backing, errs[n-lo] = buildRow(ws[r].backing, cr.snap, cr.o, &cr.k, cr.cl, ws[r].ev, cr.m, cr.lambda, cr.cands[n], rowCheap)
				}
			}()
		}
		wg.Wait()
		for n := lo; n < hi; n++ {
			if n > lo && stop(n) {
				cr.empty(cr.cands[n:hi])
				return nil
			}
			if errs[n-lo] != nil {
				return errs[n-lo]
			}
			admit(cr.cands[n])
		}
	}
	return nil
}

// empty leaves the rows of jobs is empty again, as leanKept leaves a
// queued job's row.
func (cr *cheapRows) empty(is []int) {
	for _, i := range is {
		cr.m.Rows[i] = matrixRow{Job: cr.snap.Jobs[i].ID, Index: i, Current: -1, Pin: -1, Restart: 1, Scale: 1, Unallocated: cr.lambda, Partial: true}
	}
}

// leanSolution is the lean round's allocation: every running job on its
// current entry, the queued jobs waiting; not proven (StatusFeasible), its
// bound unknown (the matrix is partial), its objective the kept entries'
// values (N_min each, as kept rows without a prediction) and λ for the
// others.
func leanSolution(snap *Snapshot, m *goodputMatrix) solution {
	sol := solution{Choice: make([]int, len(snap.Jobs)), Status: StatusFeasible, Bound: unknownBound(m.Sense)}
	for i := range m.Rows {
		row := &m.Rows[i]
		sol.Choice[i] = -1
		if snap.Jobs[i].State.Current.Running() {
			sol.Choice[i] = row.Current
			sol.Objective += row.Entries[row.Current].Value
			continue
		}
		sol.Objective += row.Unallocated
	}
	return sol
}

// leanLayout is the lean round's layout: every running job on exactly its
// current GPUs (validation proved them on the snapshot's nodes and held
// once), copied into one array.
func leanLayout(snap *Snapshot, m *goodputMatrix) layout {
	n := 0
	for i := range snap.Jobs {
		n += len(snap.Jobs[i].State.Current.Placement)
	}
	gpus := make([]GPU, n)
	lay := layout{GPUs: make([][]GPU, len(snap.Jobs))}
	for i := range snap.Jobs {
		if cur := snap.Jobs[i].State.Current; cur.Running() {
			k := copy(gpus, cur.Placement)
			lay.GPUs[i], gpus = gpus[:k:k], gpus[k:]
		}
	}
	return lay
}
