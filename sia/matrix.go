package sia

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/ilp"
)

// matrixEntry is one cell of the goodput matrix: a configuration a job may take.
type matrixEntry struct {
	// Config is the configuration (type, nodes, GPUs).
	Config configset.Config
	// Replicas is the number of data-parallel replicas (GPUs / replica size).
	Replicas int
	// Charge is the GPUs the entry counts against its pool's capacity
	// (configset.Set.Charge): Config.GPUs, or more for a rigid count that
	// is no configuration (5 GPUs of a 6-GPU node count 6), which keeps
	// every allocation placeable. A pinned entry is charged its GPUs (the
	// job holds exactly those). Zero means Config.GPUs.
	Charge int
	// Choice is the predicted best batch size and its goodput (raw
	// samples/s × efficiency) from the job's model; zero for entries without
	// a model or invalid ones, and for a running job's current configuration
	// kept without a prediction by a round past its deadline (see
	// Scheduler.Round; its Normalized is N_min, as a row of one entry).
	Choice goodput.Choice
	// Source says where the model came from (bootstrap.None for a type
	// without a model, whose one-replica configuration is offered at the
	// value of the job's smallest configuration).
	Source bootstrap.Source
	// Normalized is G: the goodput divided by the row's smallest valid
	// goodput and multiplied by the job's minimum GPU count N_min.
	Normalized float64
	// Restart is the restart factor applied (1 for the job's current
	// configuration and for jobs that are not running).
	Restart float64
	// Value is the option's objective coefficient, (Restart·Normalized)^p
	// after the variant's rounding and clipping.
	Value float64
	// Invalid marks an artifact filler (Knobs.Filler): the configuration is
	// within the job's hard bounds but has no feasible batch size or is
	// beyond the scale-up cap.
	Invalid bool
	// Dropped marks an entry not offered to the solver: its value is
	// infinite (r = 0 with p < 0 and no clipping), not a number, or beyond
	// 1e150 in magnitude (goodput ratios no model produces), so that sums of
	// values cannot overflow. A pinned entry is never dropped; its value is
	// capped at 1e150 instead.
	Dropped bool
	// Dominated marks an entry not offered to the solver because it can
	// never be optimal: leaving the job unallocated is at least as good, or
	// an entry of the same type with no more GPUs is at least as good.
	Dominated bool
	// Current marks the job's current configuration.
	Current bool
	// Shaped marks an entry the fill step built from the GPUs left idle
	// after placement (shaped.go): the solver was not offered it; the
	// plan's bound counts it.
	Shaped bool
	// unvalued marks a current configuration whose goodput the round had
	// no time to predict (rowBare): Choice is zero, Normalized N_min.
	unvalued bool
}

// matrixRow is the goodput-matrix row of one job.
type matrixRow struct {
	// Job is the job's ID and Index its position in Snapshot.Jobs.
	Job   string
	Index int
	// Entries are the job's configurations, by type order then GPUs.
	Entries []matrixEntry
	// Current is the index in Entries of the job's current configuration,
	// or −1 when the job is not running.
	Current int
	// Pin is the index in Entries the job is pinned to (checkpoint-restore in
	// progress or non-preemptible), or −1.
	Pin int
	// Restart is the job's restart factor r.
	Restart float64
	// Scale is the row normalisation factor N_min / (smallest valid goodput).
	Scale float64
	// Unallocated is the objective value of leaving the job without GPUs (λ).
	Unallocated float64
	// Partial reports that the round ran out of time before the row was
	// built in full: it offers only the job's current configuration (a
	// running job) or the smallest valid configuration of each type (a
	// queued job), or nothing but the current configuration when even
	// those came too late.
	Partial bool
	// spill is, for a pinned job whose GPUs span pools, the GPUs it holds
	// outside its pinned entry's pool, per pool (see spillPin).
	spill map[string]int
}

// goodputMatrix is the restart-discounted goodput matrix of a snapshot (paper
// §3.3), in sparse form: one Row per job listing only the configurations the job
// may take. It carries what the allocation problem needs.
type goodputMatrix struct {
	// Rows has one row per job of the snapshot, in snapshot order.
	Rows []matrixRow
	// Configs are the columns: the cluster's configurations (rigid jobs may
	// have entries outside this set, e.g. 12 GPUs on 8-GPU nodes).
	Configs []configset.Config
	// Types lists the GPU types in cluster order and Reserved the GPUs
	// withheld per type.
	Types    []string
	Reserved map[string]int
	// Capacity has one capacity row per pool (configset.Pool): per GPU
	// type for a type whose nodes have one size, and per pool
	// ("type/R", one per node size R) for a type with nodes of several
	// sizes. Pools maps each GPU type to its pools' names. An entry counts
	// against the pool of its Config (Config.Pool()).
	Capacity map[string]int
	Pools    map[string][]string
	// poolList has each type's pools (cluster.poolList; nil: poolName
	// builds the names).
	poolList map[string][]configset.Pool
	// Quotas are the snapshot's quotas with job indices (rows); a quota
	// or reservation of a type with several pools becomes a row over the
	// set of its pools (in the allocation problem, see Problem).
	Quotas []ilp.Quota
	// Sense is Minimize when p < 0 and Maximize otherwise.
	Sense ilp.Sense
	// Grid is 0.01 when values are rounded (Knobs.Round), else 0.
	Grid float64
	// P is the exponent used.
	P float64
	// Partial reports that the round's context expired while the matrix was
	// built: some rows are partial (Row.Partial). With a deadline too close
	// for the whole matrix, every row is first built cheaply (a running
	// job's current configuration, a queued job's smallest valid
	// configuration per type) and then in full while time lasts, so queued
	// jobs can still start on free GPUs.
	Partial bool
}

// TypeCapacity returns the GPUs of GPU type t: the sum of its pools'
// capacities.
func (m *goodputMatrix) TypeCapacity(t string) int {
	n := 0
	for _, c := range m.poolCapacities(t) {
		n += c
	}
	return n
}

// poolCapacities returns the capacity of each pool of GPU type t (one pool,
// the type itself, when its nodes have one size).
func (m *goodputMatrix) poolCapacities(t string) []int {
	ps, ok := m.Pools[t]
	if !ok {
		return []int{m.Capacity[t]}
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = m.Capacity[p]
	}
	return out
}

// poolName returns c.Pool(), the name of the pool of configuration c (not
// spanning), without building it when the pool is one of the cluster's.
func (m *goodputMatrix) poolName(c configset.Config) string {
	if c.NodeGPUs == 0 {
		return c.Type
	}
	if ps := m.poolList[c.Type]; len(ps) > 1 {
		for k := range ps {
			if ps[k].GPUsPerNode == c.NodeGPUs {
				return ps[k].Name
			}
		}
	}
	return c.Pool()
}

// Offered returns the number of entries offered to the solver (neither
// Dropped nor Dominated, or pinned).
func (m *goodputMatrix) Offered() int {
	n := 0
	for i := range m.Rows {
		for k := range m.Rows[i].Entries {
			if e := &m.Rows[i].Entries[k]; (!e.Dropped && !e.Dominated) || k == m.Rows[i].Pin {
				n++
			}
		}
	}
	return n
}

// cluster is the per-round view of the cluster.
type cluster struct {
	set      *configset.Set
	types    []string
	capacity map[string]int // GPUs per GPU type
	byType   map[string][]configset.Config
	pools    map[string][]string         // GPU type -> pool names
	poolList map[string][]configset.Pool // GPU type -> its pools (as pools)
	poolCap  map[string]int              // pool -> GPUs
	nodeAt   map[string]int              // node ID -> index in nodes (validation's)
	gpus     *gpuIndex                   // validation's owner of every GPU (nil: not placed)
	nodes    []Node                      // the snapshot's nodes
	shapes   shapes                      // node sizes per type (validation)
	// cur holds the running jobs' models on the types they run on, as
	// validation read them (Models.Model is a pure function of the type:
	// one call per round suffices), and curAt, per job (by index in
	// Snapshot.Jobs), 1 + its model's position in cur (0: none).
	cur    []curModel
	curAt  []int32
	firstR map[string]int // GPU type -> GPUs per node of its first pool
	counts jobCounts      // validation's counts of the jobs
	// floorRows and capRows bound the queued jobs per matrix worker whose
	// cheap row a phased matrix builds, and bareFirst builds the running
	// jobs' rows bare first (roundBudget; 0: minCheapRows and no bound).
	floorRows, capRows int
	bareFirst          bool
	free               map[string]int // GPU type -> GPUs the running jobs leave (roundBudget.free; nil: unknown)
	clk                *roundClock    // Round's clock (nil: BuildMatrix, no deadline)
}

// jobCounts are validation's counts of a snapshot's jobs, which the
// round's budget needs (roundShape, freeByType): no pass over the jobs of
// its own.
type jobCounts struct {
	ok      bool           // counted (else the budget counts)
	running int            // the running jobs
	held    map[string]int // GPU type -> the GPUs its running jobs hold
}

// newCluster groups the nodes into pools (one per type and node size,
// package configset) and lists their configurations; nodeAt indexes nodes
// by ID (validation's index: one map of the nodes per round).
func newCluster(nodes []Node, nodeAt map[string]int, maxGPUs int) (*cluster, error) {
	type key struct {
		t string
		r int
	}
	var groups []configset.NodeGroup
	idx := map[key]int{}
	// last and before are the groups of the nodes before (a type's nodes
	// are often listed together, one size after the other or alternating)
	last, before := -1, -1
	for _, n := range nodes {
		if last >= 0 && groups[last].GPUsPerNode == n.GPUs && groups[last].Type == n.Type {
			groups[last].Nodes++
			continue
		}
		if before >= 0 && groups[before].GPUsPerNode == n.GPUs && groups[before].Type == n.Type {
			groups[before].Nodes++
			last, before = before, last
			continue
		}
		k := key{n.Type, n.GPUs}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, configset.NodeGroup{Type: n.Type, GPUsPerNode: n.GPUs})
		}
		groups[i].Nodes++
		last, before = i, last
	}
	set, err := configset.New(groups, &configset.Options{MaxGPUs: maxGPUs})
	if err != nil {
		return nil, &InputError{Field: "Nodes", Reason: err.Error(), Err: err}
	}
	cl := &cluster{set: set, types: set.Types(), capacity: map[string]int{}, byType: map[string][]configset.Config{},
		pools: map[string][]string{}, poolList: map[string][]configset.Pool{}, poolCap: map[string]int{}, nodeAt: nodeAt, nodes: nodes, firstR: map[string]int{}, shapes: newShapes(groups)}
	for _, t := range cl.types {
		cl.capacity[t] = set.Capacity(t)
		cl.byType[t] = set.ByType(t)
		cl.poolList[t] = set.PoolsOf(t)
		for k, p := range cl.poolList[t] {
			if k == 0 {
				cl.firstR[t] = p.GPUsPerNode
			}
			cl.pools[t] = append(cl.pools[t], p.Name)
			cl.poolCap[p.Name] = p.Capacity()
		}
	}
	return cl, nil
}

// nodeGPUs returns the GPUs of the node with the given ID (0: unknown).
func (cl *cluster) nodeGPUs(id string) int {
	if i, ok := cl.nodeAt[id]; ok {
		return cl.nodes[i].GPUs
	}
	return 0
}

// currentConfig is the configuration of a running job's current allocation
// cur (job i of the snapshot) on type t: for a type with nodes of several
// sizes, in the pool of the nodes it runs on, a spanning configuration when
// they have several sizes (configset.Set.Spanned; the largest size when the
// placement is no valid spanning shape), or the type's first pool without a
// placement.
func (cl *cluster) currentConfig(cur Allocation, i int) configset.Config {
	c := configset.Config{Type: cur.Type, Nodes: cur.Nodes, GPUs: cur.GPUs}
	if len(cl.pools[cur.Type]) <= 1 {
		return c
	}
	lo, hi := cl.nodeSizes(cur, i)
	if lo != hi {
		if sp, ok := cl.spannedCurrent(cur); ok {
			return sp
		}
	}
	c.NodeGPUs = hi
	if c.NodeGPUs == 0 {
		c.NodeGPUs = cl.firstR[cur.Type]
	}
	return c
}

// nodeSizes returns the smallest and largest GPU count of the nodes cur's
// placement lists (0, 0 for none): as validation recorded them for job i
// (curModel), else from the nodes.
func (cl *cluster) nodeSizes(cur Allocation, i int) (lo, hi int) {
	if i >= 0 && i < len(cl.curAt) && cl.curAt[i] > 0 {
		c := &cl.cur[cl.curAt[i]-1]
		return int(c.minR), int(c.maxR)
	}
	for k, g := range cur.Placement {
		r := cl.nodeGPUs(g.Node)
		if k == 0 {
			lo = r
		}
		lo, hi = min(lo, r), max(hi, r)
	}
	return lo, hi
}

// holds reports whether c's pool can hold its shape: 1 ≤ Nodes ≤ the pool's
// nodes and Nodes ≤ GPUs ≤ Nodes × GPUs per node.
func (cl *cluster) holds(c configset.Config) bool {
	if c.Spanning() {
		_, ok := cl.set.Spanned(c.Type, c.Parts())
		return ok
	}
	p, ok := cl.pool(c)
	return ok && c.Nodes >= 1 && c.Nodes <= p.Nodes && c.Nodes <= c.GPUs && c.GPUs <= c.Nodes*p.GPUsPerNode
}

// pool returns the pool of configuration c (not spanning) of a type of the
// cluster: what Set.Pool(c.Pool()) returns, without building the pool's
// name (pool names never clash with type names, package configset).
func (cl *cluster) pool(c configset.Config) (configset.Pool, bool) {
	ps := cl.poolList[c.Type]
	for k := range ps {
		if len(ps) == 1 && c.NodeGPUs == 0 || len(ps) > 1 && c.NodeGPUs != 0 && ps[k].GPUsPerNode == c.NodeGPUs {
			return ps[k], true
		}
	}
	return configset.Pool{}, false
}

// ctxCheckJobs is how many jobs pass between checks of the context while the
// matrix is built.
const ctxCheckJobs = 8

// matrixHeader returns the matrix of a validated snapshot with its rows still
// to build (the columns, capacities, quotas and sense), the variant's knobs
// and λ, the value of leaving a job unallocated.
func matrixHeader(snap *Snapshot, o *Options, cl *cluster) (*goodputMatrix, ArtifactKnobs, float64) {
	return matrixHeaderRows(snap, o, cl, make([]matrixRow, len(snap.Jobs)))
}

// matrixHeaderRows is matrixHeader with the given rows, one per job (the
// lean round's storage, see leanScratch: every row is written before it
// is read).
func matrixHeaderRows(snap *Snapshot, o *Options, cl *cluster, rows []matrixRow) (*goodputMatrix, ArtifactKnobs, float64) {
	k := o.knobs()
	m := &goodputMatrix{
		Rows:     rows,
		Configs:  cl.set.Configs(),
		Types:    cl.types,
		Capacity: cl.poolCap,
		Pools:    cl.pools,
		poolList: cl.poolList,
		Reserved: map[string]int{},
		Sense:    ilp.Maximize,
		P:        o.P,
	}
	for t := range snap.Reserved {
		if r := reservedGPUs(snap, cl, t); r > 0 { // no effect on a type no node has
			m.Reserved[t] = r
		}
	}
	if len(snap.Quotas) > 0 {
		index := make(map[string]int, len(snap.Jobs))
		for i := range snap.Jobs {
			index[snap.Jobs[i].ID] = i
		}
		for _, q := range snap.Quotas {
			if _, ok := cl.capacity[q.Type]; q.Type != "" && !ok {
				continue // a type no node has: nothing to count
			}
			iq := ilp.Quota{Name: q.Name, Type: q.Type, Limit: q.Limit}
			if ps := cl.pools[q.Type]; q.Type != "" && (len(ps) != 1 || ps[0] != q.Type) {
				iq.Type, iq.Types = "", ps
			}
			for _, id := range q.Jobs {
				iq.Jobs = append(iq.Jobs, index[id])
			}
			m.Quotas = append(m.Quotas, iq)
		}
	}
	if o.P < 0 {
		m.Sense = ilp.Minimize
	}
	lambda := o.Lambda
	if k.Round {
		m.Grid = artifactGrid
		lambda = roundTo(lambda, artifactGrid)
	}
	return m, k, lambda
}

// buildMatrix builds the restart-discounted goodput matrix of a snapshot
// (paper §3.3; the published artifact where noted):
//
//   - one entry per configuration the job may take: adaptive and
//     strong-scaling jobs take the cluster's configurations within
//     [MinGPUs, MaxGPUs], at most Options.MaxGPUsPerJob, in multiples of the
//     replica size P, and (adaptive jobs) at most ScaleUpFactor ×
//     PeakReplicas replicas; rigid jobs take one configuration per pool at
//     their fixed count (whole nodes plus the remainder on one more node,
//     configset.Set.Fixed, charged as configset.Set.Charge); the job's
//     current configuration is always an entry (see "Node shapes" in the
//     package documentation for pools and charges);
//   - the entry's goodput is the model's best batch size for that
//     configuration (strong-scaling and rigid jobs at their fixed batch);
//     configurations without a feasible batch size are removed (or get the
//     artifact's filler);
//   - the row is normalised: divided by its smallest valid goodput and
//     multiplied by N_min, the job's minimum GPU count (its fixed count for
//     rigid jobs, P of the minimum's type for hybrid-parallel jobs); a type
//     without a model offers only its one-replica configuration, at its GPU
//     count;
//   - for a running job, every entry but the current configuration is
//     multiplied by the restart factor r = max(0, (T − N·S)/(T + S)) with
//     age T, restarts N and restart cost S;
//   - the value offered to the solver is (r·G)^p; for p < 0 the problem is
//     minimised; leaving a job unallocated is worth λ;
//   - jobs in a checkpoint-restore and running non-preemptible jobs are
//     pinned to their current configuration;
//   - a type the job may not use — outside Job.Types, or bootstrap.Excluded
//     by its Models (a hybrid-parallel job's types without stages) — has
//     no entry at all (not even the one-GPU entry of a type without a
//     model, nor an artifact filler).
//
// The snapshot must have been validated (validateSnapshot, which gives cl;
// the GPUs of running jobs are not needed here). It builds under ctx; phased builds it by priority (see buildRows), for
// deadlines too close for the whole matrix.
func buildMatrix(ctx context.Context, snap *Snapshot, o *Options, cl *cluster, phased bool) (*goodputMatrix, error) {
	m, k, lambda := matrixHeader(snap, o, cl)
	workers := workers(o, len(snap.Jobs))
	if workers == 1 {
		partial, err := buildRows(ctx, snap, o, &k, cl, m, lambda, 0, len(snap.Jobs), phased)
		m.Partial = partial
		return m, err
	}
	// Rows are independent: each worker builds a contiguous range with its
	// own scratch state, so the result does not depend on scheduling.
	partial := make([]bool, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*len(snap.Jobs)/workers, (w+1)*len(snap.Jobs)/workers
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			partial[w], errs[w] = buildRows(ctx, snap, o, &k, cl, m, lambda, lo, hi, phased)
		}(w, lo, hi)
	}
	wg.Wait()
	for w := range errs {
		if errs[w] != nil {
			return nil, errs[w] // the first failing job in snapshot order
		}
		m.Partial = m.Partial || partial[w]
	}
	return m, nil
}

// minCheapRows is the number of queued jobs (per matrix worker) whose cheap
// row is built whatever the deadline.
const minCheapRows = 8

// cheapExamine bounds the queued jobs whose cheap row a round out of time
// builds whatever the deadline, as a multiple of minCheap: rows that turn
// out empty (the job's Models exclude every type it may use) do not count
// toward minCheap, up to this many.
const cheapExamine = 16

// minJobsPerWorker keeps parallel matrix builds for snapshots large enough.
const minJobsPerWorker = 64

// rowMode says how much of a job's row to build.
type rowMode int

const (
	// rowFull: every configuration the job may take.
	rowFull rowMode = iota
	// rowCheap: a running job's current configuration; a queued job's
	// smallest valid configuration of each type it may use.
	rowCheap
	// rowKeep: the current configuration only.
	rowKeep
	// rowBare: the current configuration only, its goodput not predicted
	// (a round past its deadline: see roundClock). A row of one entry is
	// worth N_min whatever the goodput, so the allocation is the same; the
	// decision carries no batch size (Decision.LocalBatch).
	rowBare
)

// buildRows builds rows [lo, hi) of m. Phased, for a deadline too close for
// the whole matrix, it builds the rows by priority (rowRange.byPriority):
// first the cheap rows (rowCheap) of the smallest queued jobs that may
// start on free GPUs, until minCheap of them are not empty, whatever the
// deadline (cluster.cheapFirst), and every running job's current
// configuration (Round keeps time for it), then, while ctx lasts and up to
// the budget's bound, the other queued jobs' cheap rows, so that a round
// out of time can still start queued jobs on free GPUs, and then full rows,
// replacing those, while ctx lasts. Otherwise it builds full rows in order,
// and the rows left when ctx expires keep only the current configuration.
// It reports whether any row is not full.
func buildRows(ctx context.Context, snap *Snapshot, o *Options, k *ArtifactKnobs, cl *cluster, m *goodputMatrix, lambda float64, lo, hi int, phased bool) (bool, error) {
	r := &rowRange{ctx: ctx, snap: snap, o: o, k: k, cl: cl, m: m, lambda: lambda, lo: lo, hi: hi, ev: newEvaluator(),
		bare: phased && cl.bareFirst}
	if phased {
		if late, err := r.byPriority(); late || err != nil {
			return true, err
		}
	}
	return r.fullRows(phased)
}

// rowRange is one matrix worker's rows [lo, hi) and its scratch state.
type rowRange struct {
	ctx     context.Context
	snap    *Snapshot
	o       *Options
	k       *ArtifactKnobs
	cl      *cluster
	m       *goodputMatrix
	lambda  float64
	lo, hi  int
	ev      *evaluator
	backing []matrixEntry // the rows' entries (one array keeps allocations low)
	checks  int           // expired's calls
	kept    int           // keepMode's calls
	bare    bool          // running jobs' rows are built bare (rowBare)
}

// expired reports, every ctxCheckJobs calls, whether ctx has ended.
func (r *rowRange) expired() bool {
	r.checks++
	return r.checks%ctxCheckJobs == 0 && r.ctx != nil && r.ctx.Err() != nil
}

// keepMode is the mode of a running job's kept row: rowKeep, or rowBare
// when the budget builds them bare first or past the clock's keepEnd
// (looked at every keepCheckJobs of them).
func (r *rowRange) keepMode() rowMode {
	if r.kept++; !r.bare && r.kept%keepCheckJobs == 1 {
		r.bare = r.cl.clk.past(r.cl.clk.keepEnd)
	}
	if r.bare {
		return rowBare
	}
	return rowKeep
}

// build builds row i in the given mode.
func (r *rowRange) build(i int, mode rowMode) error {
	var err error
	r.backing, err = buildRow(r.backing, r.snap, r.o, r.k, r.cl, r.ev, r.m, r.lambda, i, mode)
	return err
}

// byPriority builds every running job's kept row and the queued jobs'
// cheap rows (the first cluster.minCheap whatever the deadline, then while
// ctx lasts up to cluster.maxCheap; a queued job's row stays empty after
// them). late reports that the queued rows were cut short: the running
// jobs' rows built bare first are then valued while ctx lasts, and no full
// row is built.
func (r *rowRange) byPriority() (late bool, err error) {
	running := r.running()
	// A running job's row is its current configuration, a queued job's
	// cheap row one entry per type, the others empty (append grows the
	// array should a row hold more).
	cheap := min(r.cl.minCheap(), r.hi-r.lo-running) * len(r.cl.types)
	r.backing = make([]matrixEntry, 0, cheap)
	built, queued, err := r.startable()
	if err != nil {
		return true, err
	}
	if cap(r.backing)-len(r.backing) < running {
		// The kept rows get an array of their own: growing this one would
		// copy the rows built so far.
		r.backing = make([]matrixEntry, 0, running+cheap)
	}
	for i := r.lo; i < r.hi; i++ {
		mode := rowKeep // a queued job's row stays empty
		if built[i-r.lo] {
			continue
		} else if r.snap.Jobs[i].State.Current.Running() {
			mode = r.keepMode()
		} else {
			if late = late || queued >= r.cl.maxCheap() || queued >= r.cl.minCheap() && r.expired(); !late {
				mode = rowCheap
			}
			queued++
		}
		if err := r.build(i, mode); err != nil {
			return true, err
		}
	}
	if late && r.cl.bareFirst && r.cl.clk != nil {
		return true, r.valueBare()
	}
	return late, nil
}

// running returns the number of running jobs among rows [lo, hi).
func (r *rowRange) running() int {
	n := 0
	for i := r.lo; i < r.hi; i++ {
		if r.snap.Jobs[i].State.Current.Running() {
			n++
		}
	}
	return n
}

// valueBare rebuilds the running jobs' rows built bare first with their
// goodput (rowKeep) while ctx and the clock's keepEnd last.
func (r *rowRange) valueBare() error {
	for i := r.lo; i < r.hi && !r.expired() && !r.cl.clk.past(r.cl.clk.keepEnd); i++ {
		if r.snap.Jobs[i].State.Current.Running() {
			if err := r.build(i, rowKeep); err != nil {
				return err
			}
		}
	}
	return nil
}

// startable builds the cheap rows of the smallest queued jobs that may
// start on free GPUs (cluster.cheapFirst) until minCheap of them are not
// empty, whatever the deadline: even a round out of time when it starts
// admits some, and a queue whose first jobs cannot start does not keep the
// others waiting. It reports the rows built (by position in [lo, hi)) and
// their number.
func (r *rowRange) startable() (built []bool, n int, err error) {
	built = make([]bool, r.hi-r.lo)
	admitted := 0
	for _, i := range r.cl.cheapFirst(r.snap, r.o, r.lo, r.hi, cheapExamine*r.cl.minCheap()) {
		if admitted >= r.cl.minCheap() {
			break
		}
		if err := r.build(i, rowCheap); err != nil {
			return built, n, err
		}
		built[i-r.lo] = true
		n++
		if len(r.m.Rows[i].Entries) > 0 {
			admitted++
		}
	}
	return built, n, nil
}

// fullRows builds full rows in order while ctx lasts; phased, it stops
// there (the rows built so far stay), else the rows left keep only the
// current configuration (keepMode). It reports whether a row is not full.
func (r *rowRange) fullRows(phased bool) (bool, error) {
	r.backing = make([]matrixEntry, 0, (r.hi-r.lo)*8)
	partial := false
	for i := r.lo; i < r.hi; i++ {
		if partial = partial || r.expired(); partial && phased {
			return true, nil
		}
		mode := rowFull
		if partial {
			mode = r.keepMode()
		}
		if err := r.build(i, mode); err != nil {
			return partial, err
		}
	}
	return partial, nil
}

// buildRow builds row i of m in the given mode, its entries appended to
// backing (returned): a running job's bare row by bareRow when it can,
// else the steps of the paper's §3.3, one method each (rowSteps).
func buildRow(backing []matrixEntry, snap *Snapshot, o *Options, k *ArtifactKnobs, cl *cluster, ev *evaluator, m *goodputMatrix, lambda float64, i int, mode rowMode) ([]matrixEntry, error) {
	if mode == rowBare {
		if b, ok := bareRow(backing, snap, o, k, cl, m, lambda, i); ok {
			return b, nil
		}
	}
	return rowSteps(backing, snap, o, k, cl, ev, m, lambda, i, mode)
}

// bareRow builds the bare kept row (rowBare) of running job i in the
// common case without a rowBuilder, its entry appended to backing: an
// adaptive or strong-scaling job whose current configuration is one of the
// set (one pool, within its bounds, whole replicas), on a type it may use
// and with a valid model that validation read (cluster.cur). The row is
// the one rowSteps builds (TestBareRowTwin). In every other case it
// reports false and builds nothing: rowSteps handles them, errors included.
func bareRow(backing []matrixEntry, snap *Snapshot, o *Options, k *ArtifactKnobs, cl *cluster, m *goodputMatrix, lambda float64, i int) ([]matrixEntry, bool) {
	j := restoreView(&snap.Jobs[i], snap.Now)
	cur := j.State.Current
	if !cur.Running() || j.Kind == Rigid || k.BlindFirst && j.State.PeakReplicas == 0 || j.Types != nil && !slices.Contains(j.Types, cur.Type) {
		return backing, false
	}
	if i >= len(cl.curAt) || cl.curAt[i] == 0 {
		return backing, false
	}
	cm := &cl.cur[cl.curAt[i]-1]
	if cm.src <= bootstrap.None || cm.src >= bootstrap.Excluded || cm.m.Stages < 0 {
		return backing, false // no model, excluded, unknown: rowSteps's cases
	}
	p := max(cm.m.Stages, 1)
	minG, maxG := max(j.MinGPUs, 1), o.MaxGPUsPerJob
	if j.MaxGPUs > 0 && j.MaxGPUs < maxG {
		maxG = j.MaxGPUs
	}
	if cur.GPUs < minG || cur.GPUs > maxG || cur.GPUs%p != 0 {
		return backing, false
	}
	c := cl.currentConfig(cur, i)
	if c.Spanning() || !slices.Contains(cl.byType[cur.Type], c) {
		return backing, false
	}
	if _, ok := j.Models.(Evaluator); !ok {
		mod := cm.m
		if j.Kind != Adaptive && mod.FixedBatch == 0 {
			mod.FixedBatch = mod.MaxBatch
		}
		if mod.Validate() != nil {
			return backing, false // rowSteps reports it
		}
	}
	backing = append(backing, matrixEntry{Config: c, Replicas: c.GPUs / p, Charge: c.GPUs, Source: cm.src, Restart: 1, Current: true, unvalued: true})
	n := len(backing)
	row := &m.Rows[i] // built in place (a row is large)
	*row = matrixRow{Job: j.ID, Index: i, Current: -1, Pin: -1, Restart: 1, Scale: 1, Unallocated: lambda, Partial: true, Entries: backing[n-1 : n : n]}
	finishRow(row, j, snap.Now, o, k, m.Sense)
	spillPin(row, j, cl)
	return backing, true
}

// rowSteps builds row i of m in the given mode, its entries appended to
// backing (returned): the steps of the paper's §3.3, one method each.
func rowSteps(backing []matrixEntry, snap *Snapshot, o *Options, k *ArtifactKnobs, cl *cluster, ev *evaluator, m *goodputMatrix, lambda float64, i int, mode rowMode) ([]matrixEntry, error) {
	j := restoreView(&snap.Jobs[i], snap.Now)
	if (mode == rowKeep || mode == rowBare) && !j.State.Current.Running() {
		// A queued job's row left empty (a phased matrix past its cheap
		// rows): what finishRow makes of no entries.
		m.Rows[i] = matrixRow{Job: j.ID, Index: i, Current: -1, Pin: -1, Restart: 1, Scale: 1, Unallocated: lambda, Partial: true}
		return backing, nil
	}
	start := len(backing)
	rb := rowBuilder{j: j, idx: i, o: o, k: k, cl: cl, ev: ev, cur: j.State.Current, dst: backing}
	rb.init(mode)
	if err := rb.addTypes(); err != nil {
		return rb.dst, err
	}
	backing = rb.dst
	row := matrixRow{Job: j.ID, Index: i, Current: -1, Pin: -1, Restart: 1, Scale: 1, Unallocated: lambda, Partial: mode != rowFull}
	row.Entries = backing[start:len(backing):len(backing)]
	finishRow(&row, j, snap.Now, o, k, m.Sense)
	spillPin(&row, j, cl)
	m.Rows[i] = row
	return backing, nil
}

// spillPin splits the charge of a pinned job whose GPUs lie on nodes of
// several sizes of its type (several pools): its entry is charged the GPUs
// it holds in the entry's pool, and Row.spill records those it holds in the
// others, which the allocation problem withholds from them (the pin always
// holds). Charging every GPU to one pool would let the solver give the
// other pools' held GPUs to jobs that placement then cannot place.
func spillPin(row *matrixRow, j *Job, cl *cluster) {
	if row.Pin < 0 || len(cl.pools[j.State.Current.Type]) < 2 {
		return
	}
	if lo, hi := cl.nodeSizes(j.State.Current, row.Index); lo == hi {
		return // on nodes of one size: one pool
	}
	e := &row.Entries[row.Pin]
	per := map[string]int{}
	for _, g := range j.State.Current.Placement {
		per[configset.PoolName(e.Config.Type, cl.nodeGPUs(g.Node))]++
	}
	main := e.Config.Pool()
	if len(per) < 2 || per[main] == 0 {
		return
	}
	e.Charge = per[main]
	delete(per, main)
	row.spill = per
}

// rowBuilder collects the raw entries (goodput, no normalisation) of one
// job's row, type by type.
type rowBuilder struct {
	j     *Job
	idx   int // the job's index in Snapshot.Jobs
	o     *Options
	k     *ArtifactKnobs
	cl    *cluster
	ev    *evaluator
	cur   Allocation
	eval  Evaluator // the job's own predictor, or nil
	dst   []matrixEntry
	bound struct{ minG, maxG, capR int }
	// capT and reach are the scale-up cap on replicas on the type being
	// added (see scaleUpCap); window says its candidates are windowShapes.
	capT   int
	reach  []poolReach // in ev's storage
	window bool
	// keepOnly builds the current configuration only; smallestOnly each
	// type's smallest valid configuration (see rowMode).
	keepOnly, smallestOnly bool
	// blind values every type as having no model (ArtifactKnobs.BlindFirst).
	blind bool
	// bare leaves the current configuration's goodput unpredicted (rowBare).
	bare bool
	// The type being added: its name, replica size, model, source and the
	// job's current configuration on it.
	t      string
	p      int
	model  goodput.Model
	src    bootstrap.Source
	curCfg configset.Config
}

// init sets what the mode and the job decide for every type.
func (rb *rowBuilder) init(mode rowMode) {
	// A running job's cheap row is its current configuration only.
	rb.keepOnly = mode == rowKeep || mode == rowBare || mode == rowCheap && rb.cur.Running()
	rb.bare = mode == rowBare
	rb.smallestOnly = mode == rowCheap && !rb.cur.Running()
	rb.blind = rb.k.BlindFirst && rb.j.State.PeakReplicas == 0
	rb.eval, _ = rb.j.Models.(Evaluator)
	rb.bounds()
}

// bounds sets the job's GPU bounds and the scale-up cap on replicas (§3.3:
// an adaptive job grows at most ScaleUpFactor× its peak per round).
func (rb *rowBuilder) bounds() {
	j, o := rb.j, rb.o
	rb.bound.minG = max(j.MinGPUs, 1)
	rb.bound.maxG = o.MaxGPUsPerJob
	if j.MaxGPUs > 0 && j.MaxGPUs < rb.bound.maxG {
		rb.bound.maxG = j.MaxGPUs
	}
	rb.bound.capR = math.MaxInt
	if j.Kind == Adaptive && !o.NoScaleUpCap {
		// In float64 first: ScaleUpFactor × PeakReplicas may exceed MaxInt.
		if c := math.Floor(o.ScaleUpFactor*float64(j.State.PeakReplicas) + 1e-9); c < float64(maxGPUsBound) {
			rb.bound.capR = max(1, int(c))
		}
	}
}

// addTypes appends the entries of every type in cluster order, or of the
// current type only for a row of the current configuration (keepOnly).
func (rb *rowBuilder) addTypes() error {
	if rb.keepOnly {
		if !rb.cur.Running() {
			return nil
		}
		return rb.addType(rb.cur.Type)
	}
	for _, t := range rb.cl.types {
		if err := rb.addType(t); err != nil {
			return err
		}
	}
	return nil
}

// addType appends the entries of type t: its candidates (§3.1), each
// valued (§3.2), and the current configuration kept when it is not among
// them.
func (rb *rowBuilder) addType(t string) error {
	if rb.keepOnly && (!rb.cur.Running() || rb.cur.Type != t) {
		return nil
	}
	ok, err := rb.typeModel(t)
	if err != nil || !ok {
		return err
	}
	curSeen, noModelDone := false, []string(nil)
	cands := rb.candidates()
	rb.scaleUpCap(cands)
	// A cheap row has each pool's smallest valid configuration (on a type
	// with nodes of several sizes, the smallest nodes may be full while a
	// larger node is free); spanning configurations count as one pool.
	pools, done := 1, [maxCheapPools]int{}
	if rb.smallestOnly {
		pools = min(max(len(rb.cl.pools[t]), 1), maxCheapPools)
	}
	found := 0
	for _, c := range cands {
		if pools > 1 && slices.Contains(done[:found], c.NodeGPUs) {
			continue
		}
		e, keep := rb.value(c, &noModelDone)
		if !keep {
			continue
		}
		curSeen = curSeen || e.Current
		rb.dst = append(rb.dst, e)
		if rb.smallestOnly && !e.Invalid {
			done[found] = c.NodeGPUs
			if found++; found == pools {
				break // every pool's smallest valid configuration
			}
		}
	}
	if !curSeen {
		rb.keepCurrent()
	}
	return nil
}

// typeModel sets up type t: the job's model and replica size on it (the
// model's pipeline stages, replicaSize), and whether the type is offered at
// all (Job.Types, bootstrap.Excluded).
func (rb *rowBuilder) typeModel(t string) (bool, error) {
	ok, err := rb.typeModelOf(t)
	return ok, atJob(err, rb.idx)
}

// typeModelOf is typeModel with errors naming the field "Models".
func (rb *rowBuilder) typeModelOf(t string) (bool, error) {
	j := rb.j
	rb.t, rb.p = t, 1
	// The model is read into rb.model once (no copies of it on the way).
	model := &rb.model
	src := rb.cl.jobModel(model, j, rb.idx, t)
	ok, err := admissible(j, t, src)
	if err != nil || !ok {
		return false, err
	}
	if rb.p, err = replicaSize(j, t, model.Stages); err != nil {
		return false, err
	}
	if rb.blind {
		src = bootstrap.None
	}
	if j.Kind != Adaptive && model.FixedBatch == 0 {
		model.FixedBatch = model.MaxBatch // an adaptive model: its largest batch
	}
	if src != bootstrap.None && rb.eval == nil {
		if err := model.Validate(); err != nil {
			return false, &InputError{Job: j.ID, Type: t, Field: "Models", Reason: "invalid model: " + err.Error(), Err: err}
		}
	}
	rb.src = src
	rb.curCfg = configset.Config{}
	if rb.cur.Running() && rb.cur.Type == t {
		rb.curCfg = rb.cl.currentConfig(rb.cur, rb.idx)
	}
	return true, nil
}

// appendFixed appends configset.Set.Fixed(t, g) to dst, the shapes of a
// job of g GPUs on type t, one per pool of t whose capacity holds g, in
// pool order, from the cluster's pools (no allocation per row; a twin
// test holds it to Fixed).
func (cl *cluster) appendFixed(dst []configset.Config, t string, g int) []configset.Config {
	ps := cl.poolList[t]
	if g <= 0 {
		return dst
	}
	for k := range ps {
		p := &ps[k]
		if g > p.Capacity() {
			continue
		}
		c := configset.Config{Type: t, Nodes: (g + p.GPUsPerNode - 1) / p.GPUsPerNode, GPUs: g}
		if len(ps) > 1 {
			c.NodeGPUs = p.GPUsPerNode
		}
		dst = append(dst, c)
	}
	return dst
}

// candidates returns the configurations of the type the job may take
// (§3.1: the configuration set, within the job's bounds and in whole
// replicas; a rigid job's count as whole nodes plus a remainder).
func (rb *rowBuilder) candidates() []configset.Config {
	j, t, p := rb.j, rb.t, rb.p
	cands := rb.ev.cands[:0]
	if j.Kind == Rigid {
		if j.GPUs%p == 0 {
			// one shape per pool: whole nodes plus the remainder
			cands = rb.cl.appendFixed(cands, t, j.GPUs)
			// a count no pool holds spans the type's pools
			if c, ok := rb.cl.set.Span(t, j.GPUs); ok {
				cands = append(cands, c)
			}
		}
	} else if rb.keepOnly {
		// the current configuration, when it is one of the above
		cur := rb.curCfg
		if cur.GPUs >= rb.bound.minG && cur.GPUs <= rb.bound.maxG && cur.GPUs%p == 0 {
			if cur.Spanning() {
				cands = append(cands, rb.cl.set.Spans(t, rb.bound.minG, rb.bound.maxG, p, maxSpansPerType)...)
			} else {
				for _, c := range rb.cl.byType[t] {
					if c.GPUs == cur.GPUs && c == cur {
						cands = append(cands, c)
						break
					}
				}
			}
		}
	} else {
		for _, c := range rb.cl.byType[t] {
			if c.GPUs >= rb.bound.minG && c.GPUs <= rb.bound.maxG && c.GPUs%p == 0 {
				cands = append(cands, c)
			}
		}
		// a minimum no pool holds: configurations spanning pools
		cands = append(cands, rb.cl.set.Spans(t, rb.bound.minG, rb.bound.maxG, p, maxSpansPerType)...)
		if rb.window = rb.poolsWithout(cands); rb.window {
			cands = rb.windowShapes(cands)
		}
	}
	if rb.keepOnly {
		kept := cands[:0]
		for _, c := range cands {
			if c == rb.curCfg {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	rb.ev.cands = cands
	return cands
}

// poolsWithout reports whether some pool of the type being added has no
// candidate among cands (spanning ones aside; the type's configurations
// come pool by pool, configset.Set.ByType).
func (rb *rowBuilder) poolsWithout(cands []configset.Config) bool {
	pools := len(rb.cl.pools[rb.t])
	if pools == 1 {
		return len(cands) == 0
	}
	seen, last := 0, -2
	for _, c := range cands {
		if k := poolKey(c); k != -1 && k != last {
			seen, last = seen+1, k
		}
	}
	return seen < pools
}

// windowShapes appends to cands, for a job whose bounds [MinGPUs, MaxGPUs]
// hold no configuration size of a pool of the type (3 GPUs exactly on 8-GPU
// nodes, 9 to 12 on 8-GPU nodes, 4 or 5 on 6-GPU nodes), the shape of its
// smallest count in the bounds in that pool as a rigid job's (whole nodes
// plus a remainder, charged as configset.Set.Charge says), and when no pool
// has a candidate the count spanning the pools: without them the job could
// never run on those nodes however idle they are.
func (rb *rowBuilder) windowShapes(cands []configset.Config) []configset.Config {
	g := ceilDiv(rb.bound.minG, rb.p) * rb.p
	if g <= 0 || g > rb.bound.maxG {
		return cands
	}
	n := len(cands)
	fixed := rb.cl.appendFixed(rb.ev.fixed[:0], rb.t, g)
	rb.ev.fixed = fixed
	for _, f := range fixed {
		k, has := poolKey(f), false
		for _, c := range cands[:n] {
			has = has || !c.Spanning() && poolKey(c) == k
		}
		if !has {
			cands = append(cands, f)
		}
	}
	if n > 0 {
		return cands
	}
	if c, ok := rb.cl.set.Span(rb.t, g); ok {
		cands = append(cands, c)
	}
	return cands
}

// scaleUpCap sets the cap on replicas on the type being added, whose
// candidates are cands: ScaleUpFactor × PeakReplicas (bound.capR), never
// below the job's minimum (capT), and in each pool never below the pool's
// smallest candidate above the peak (reach). On nodes whose configuration
// sizes leave gaps wider than the factor (1, 7 on 7-GPU nodes; 1, 2, 6 on
// 6-GPU nodes) the cap alone would offer nothing above the peak, and a job
// would never grow (or, with a MinGPUs off the sizes, never start) while
// the node's other GPUs idle.
func (rb *rowBuilder) scaleUpCap(cands []configset.Config) {
	rb.capT = max(rb.bound.capR, ceilDiv(rb.bound.minG, rb.p))
	rb.reach = rb.ev.reach[:0]
	defer func() { rb.ev.reach = rb.reach }()
	if rb.capT == math.MaxInt {
		return
	}
	for _, c := range cands {
		r := c.GPUs / rb.p
		if r <= rb.j.State.PeakReplicas {
			continue
		}
		k, found := poolKey(c), false
		for i := range rb.reach {
			if rb.reach[i].pool == k {
				rb.reach[i].replicas = min(rb.reach[i].replicas, r)
				found = true
			}
		}
		if !found {
			rb.reach = append(rb.reach, poolReach{pool: k, replicas: r})
		}
	}
}

// capped reports whether candidate c (of r replicas) is beyond the
// scale-up cap (see scaleUpCap).
func (rb *rowBuilder) capped(c configset.Config, r int) bool {
	if r <= rb.capT {
		return false
	}
	k := poolKey(c)
	for _, pr := range rb.reach {
		if pr.pool == k {
			return r > pr.replicas
		}
	}
	return true
}

// poolReach is a pool's smallest candidate above a job's peak (replicas).
type poolReach struct{ pool, replicas int }

// poolKey names c's pool within its type: its node size (0 for a type of
// one pool), −1 for configurations spanning pools.
func poolKey(c configset.Config) int {
	if c.Spanning() {
		return -1
	}
	return c.NodeGPUs
}

// isCurrent reports whether c is the job's current configuration.
func (rb *rowBuilder) isCurrent(c configset.Config) bool {
	return rb.cur.Running() && rb.cur.Type == rb.t && c == rb.curCfg
}

// value makes the entry of candidate c with its predicted goodput (§3.2);
// keep is false for an entry left out: beyond the scale-up cap, a type
// without a model beyond its smallest configuration in each of its pools
// (noModelDone lists the pools that have theirs), or no feasible batch
// size (with ArtifactKnobs.Filler such entries stay, marked Invalid).
func (rb *rowBuilder) value(c configset.Config, noModelDone *[]string) (e matrixEntry, keep bool) {
	p, filler := rb.p, rb.k.Filler
	e = matrixEntry{Config: c, Replicas: c.GPUs / p, Charge: c.GPUs, Source: rb.src, Restart: 1, Current: rb.isCurrent(c)}
	if rb.j.Kind == Rigid || c.Spanning() || rb.window {
		e.Charge = rb.cl.set.Charge(c) // the configurations of the set charge their GPUs
	}
	switch {
	case rb.capped(c, e.Replicas) && !e.Current:
		// Beyond the scale-up cap (which never goes below the job's
		// minimum, see scaleUpCap).
		e.Invalid = true
		return e, filler
	case rb.src == bootstrap.None:
		// Only the smallest configuration of the type, valued at its GPU
		// count (in normalise); the current one is kept too. A type with
		// nodes of several sizes offers it in each pool (configurations
		// spanning pools count as one more), so that a full pool does not
		// keep the job off the type's other nodes.
		pool := c.Pool()
		if c.Spanning() {
			pool = "+span"
		}
		if slices.Contains(*noModelDone, pool) && !e.Current {
			e.Invalid = true
			return e, filler
		}
		*noModelDone = append(*noModelDone, pool)
		return e, true
	case rb.bare:
		e.unvalued = true
		return e, true
	}
	ch, ok := rb.goodput(c)
	if !ok {
		e.Invalid = true
		return e, filler || e.Current
	}
	e.Choice = ch
	return e, true
}

// goodput predicts the goodput of configuration c (§3.2: the best batch
// size of the job's model, or the host's Evaluator); false when no batch
// size is feasible or the goodput is not a positive finite number.
func (rb *rowBuilder) goodput(c configset.Config) (goodput.Choice, bool) {
	r := c.GPUs / rb.p
	var ch goodput.Choice
	var ok bool
	if rb.eval != nil {
		ch, ok = rb.eval.Evaluate(rb.t, c.Nodes, r)
	} else {
		ch, ok = rb.ev.best(&rb.model, c.Nodes, r)
	}
	return ch, ok && ch.Goodput > 0 && !math.IsInf(ch.Goodput, 0)
}

// keepCurrent appends the job's current configuration on the type when it
// is outside the candidates (host-chosen, or since excluded), so the job can
// stay: unless it breaks the job's bounds or its pool cannot hold the
// shape, then only a pin keeps it (§3.3: a running job's current
// configuration is always an option).
func (rb *rowBuilder) keepCurrent() {
	j, cur, c := rb.j, rb.cur, rb.curCfg
	if !cur.Running() || cur.Type != rb.t {
		return
	}
	inBounds := cur.GPUs >= rb.bound.minG && cur.GPUs <= rb.bound.maxG
	if j.Kind == Rigid {
		inBounds = cur.GPUs == j.GPUs
	}
	inBounds = inBounds && cur.GPUs%rb.p == 0 // whole replicas
	pinned := j.State.Restoring || j.NonPreemptible
	if !(inBounds && rb.cl.holds(c)) && !pinned {
		return
	}
	e := matrixEntry{Config: c, Replicas: max(1, c.GPUs/rb.p), Charge: rb.cl.set.Charge(c), Source: rb.src, Restart: 1, Current: true}
	if rb.bare && rb.src != bootstrap.None {
		e.unvalued = true
	} else if rb.src != bootstrap.None {
		if ch, ok := rb.goodput(c); ok {
			e.Choice = ch
		} else {
			e.Invalid = true
		}
	}
	rb.dst = append(rb.dst, e)
}

// maxCheapPools bounds the pools of one type a cheap row offers a
// configuration in (its smallest valid one in each).
const maxCheapPools = 8

// maxValue bounds the magnitude of the values offered to the solver: a
// million jobs of at most 1e150 each sum to far below MaxFloat64.
const maxValue = 1e150

// maxGPUsBound is above any GPU count a configuration can have (float64
// values below it convert to int exactly enough).
const maxGPUsBound = 1 << 52

// curModel is a job's model on a type and its source.
type curModel struct {
	m   goodput.Model
	src bootstrap.Source
	// minR and maxR are the smallest and largest GPU count of the nodes
	// the job's placement lists (0 for none: validation records them).
	minR, maxR int32
}

// jobModel sets *m to job j's model on type t (job i of the snapshot) and
// returns its source: for the type a running job runs on, the one
// validation read (cluster.cur), else Models.Model's.
func (cl *cluster) jobModel(m *goodput.Model, j *Job, i int, t string) bootstrap.Source {
	if i < len(cl.curAt) && cl.curAt[i] > 0 && j.State.Current.Type == t {
		c := &cl.cur[cl.curAt[i]-1]
		*m = c.m
		return c.src
	}
	var src bootstrap.Source
	*m, src = j.Models.Model(t)
	return src
}

// admissible reports whether type t may be offered to the job at all,
// given the source of its model on it (src, from Models.Model): not when
// the job's Types leave it out or its Models exclude it
// (bootstrap.Excluded). A pinned job whose models exclude its own type is
// an error (the round can neither keep nor move it).
func admissible(j *Job, t string, src bootstrap.Source) (bool, error) {
	if j.Types != nil && !slices.Contains(j.Types, t) {
		return false, nil
	}
	switch {
	case src == bootstrap.Excluded:
		// j is a restoreView: Restoring says a restore is under way at
		// Now; its RestoreUntil may be a restore that has ended.
		if j.State.Current.Running() && (j.State.Restoring || j.NonPreemptible) && j.State.Current.Type == t {
			return false, &InputError{Job: j.ID, Type: t, Field: "Models",
				Reason: "exclude the type the job runs on, but the job is pinned (Restoring or NonPreemptible) and cannot move"}
		}
		return false, nil
	case src < bootstrap.None || src > bootstrap.Excluded:
		return false, &InputError{Job: j.ID, Type: t, Field: "Models", Reason: fmt.Sprintf("unknown source %d", int(src))}
	}
	return true, nil
}

// finishRow turns the raw entries into the solver's options, the steps of
// the paper's §3.3 in order.
func finishRow(row *matrixRow, j *Job, now time.Time, o *Options, k *ArtifactKnobs, sense ilp.Sense) {
	normalise(row, j, k)
	applyRestartFactor(row, j, now, o, k)
	for i := range row.Entries {
		row.Entries[i].setValue(o.P, k)
	}
	pin(row, j)
	markDominated(row, sense)
}

// nMin is N_min of the normalisation (§3.3): the job's smallest GPU count
// (MinGPUs, a rigid job's count, at least one replica).
func nMin(row *matrixRow, j *Job, minIdx int) float64 {
	nmin := float64(max(j.MinGPUs, 1))
	if j.Kind == Rigid {
		return float64(j.GPUs)
	}
	if minIdx >= 0 && row.Entries[minIdx].Replicas > 0 { // one replica of a hybrid-parallel job
		e := &row.Entries[minIdx]
		nmin = math.Max(nmin, float64(e.Config.GPUs/e.Replicas))
	}
	return nmin
}

// normalise sets each entry's G (§3.3: goodput × N_min / the row's smallest
// valid goodput, so the smallest configuration is worth its GPU count); a
// type without a model is valued at its GPU count, an invalid entry at
// the artifact's filler (or N_min). It also marks the current entry.
func normalise(row *matrixRow, j *Job, k *ArtifactKnobs) {
	es := row.Entries
	minGood, minIdx := math.Inf(1), -1
	for i := range es {
		if e := &es[i]; e.Source != bootstrap.None && !e.Invalid && !e.unvalued && e.Choice.Goodput < minGood {
			minGood, minIdx = e.Choice.Goodput, i
		}
	}
	nmin := nMin(row, j, minIdx)
	if minIdx >= 0 {
		row.Scale = nmin / minGood
	}
	for i := range es {
		e := &es[i]
		switch {
		case e.Invalid && k.Filler:
			e.Normalized = artifactFiller
		case e.Invalid, e.unvalued:
			// Only a current configuration that became invalid is kept
			// without fillers: value it like the smallest one. A row of
			// one unvalued entry is worth N_min, as it would be valued.
			e.Normalized = nmin
		case e.Source == bootstrap.None && j.Kind == Rigid:
			e.Normalized = nmin
		case e.Source == bootstrap.None:
			e.Normalized = float64(e.Config.GPUs)
		default:
			e.Normalized = normalised(e.Choice.Goodput, row.Scale, k)
		}
		if e.Current {
			row.Current = i
		}
	}
}

// normalised is G of a valid goodput in a row of the given scale (§3.3),
// raised to the artifact's filler when it asks for one (Knobs.Filler).
func normalised(goodput, scale float64, k *ArtifactKnobs) float64 {
	g := goodput * scale
	if k.Filler && g <= artifactFiller {
		g = artifactFiller
	}
	return g
}

// setValue sets the entry's Value, (Restart·Normalized)^p as the variant
// clips and rounds it, and Dropped when that value is beyond maxValue or
// not a number.
func (e *matrixEntry) setValue(p float64, k *ArtifactKnobs) {
	e.Value = power(e.Restart*e.Normalized, p, k)
	e.Dropped = !(math.Abs(e.Value) <= maxValue)
}

// restartFactor is r = (age − N·S) / (age + S) clamped to [0, 1] (§3.3):
// the share of a running job's progress left after N restarts of S
// seconds each and one more; 1 while the job is younger than S with
// ArtifactKnobs.RestartGrace.
func restartFactor(age, s float64, restarts int, grace bool) float64 {
	if grace && age < s {
		return 1
	}
	r := 0.0
	if age+s > 0 {
		r = (age - float64(restarts)*s) / (age + s)
	}
	return math.Min(1, math.Max(0, r))
}

// applyRestartFactor discounts every entry of a running job but its current
// configuration by the restart factor (§3.3).
func applyRestartFactor(row *matrixRow, j *Job, now time.Time, o *Options, k *ArtifactKnobs) {
	if !j.State.Current.Running() {
		return
	}
	row.Restart = restartFactor(now.Sub(j.Submitted).Seconds(), o.restartCost(j).Seconds(), j.State.Restarts, k.RestartGrace)
	for i := range row.Entries {
		if !row.Entries[i].Current {
			row.Entries[i].Restart = row.Restart
		}
	}
}

// power is an option's value (r·G)^p (§3.3; +Inf for r·G = 0 when p < 0,
// 0 when p > 0), clipped and rounded as the artifact does when asked.
func power(x, p float64, k *ArtifactKnobs) float64 {
	var v float64
	if x <= 0 {
		if p < 0 {
			v = math.Inf(1)
		}
	} else {
		v = math.Pow(x, p)
	}
	return artifactValue(v, k)
}

// artifactValue clips (ArtifactKnobs.Clip) and rounds (Round) a value.
func artifactValue(v float64, k *ArtifactKnobs) float64 {
	if k.Clip && v > artifactClip {
		v = artifactClip
	}
	if k.Round {
		v = roundTo(v, artifactGrid)
	}
	return v
}

// pin fixes a restoring or non-preemptible job to its current entry (§3.3's
// pinned jobs; checkpoint-restores in progress): never dropped, charged
// exactly its GPUs, with a finite value.
func pin(row *matrixRow, j *Job) {
	if row.Current < 0 || !(j.State.Restoring || j.NonPreemptible) {
		return
	}
	row.Pin = row.Current
	e := &row.Entries[row.Current]
	e.Dropped = false
	// A pinned job holds exactly its GPUs: charging it more (an off-chain
	// rigid count) could make pins that fit look infeasible.
	e.Charge = e.Config.GPUs
	if !(math.Abs(e.Value) <= maxValue) {
		// The pin holds whatever its value; a finite one keeps the
		// objective finite.
		e.Value = maxValue
	}
}

// better reports whether value a beats value b in the objective's sense.
func better(a, b float64, sense ilp.Sense) bool {
	if sense == ilp.Minimize {
		return a < b
	}
	return a > b
}

// markDominated flags entries that can never be part of an optimal
// allocation, so the solver need not see them: an entry no better than
// leaving the job unallocated (which also frees its GPUs), and an entry no
// better than an entry of the same type with at most as many GPUs. Removing
// them does not change the optimal objective. The pinned entry is kept.
func markDominated(row *matrixRow, sense ilp.Sense) {
	es := row.Entries
	for i := range es {
		e := &es[i]
		if e.Dropped || i == row.Pin {
			continue
		}
		if !better(e.Value, row.Unallocated, sense) {
			e.Dominated = true
			continue
		}
		for k := range es {
			o := &es[k]
			if k == i || o.Dropped || o.Dominated || !samePool(o.Config, e.Config) || o.charge() > e.charge() ||
				o.Config.Spanning() || e.Config.Spanning() { // spanning entries use several pools
				continue
			}
			// o uses no more GPUs of the pool; e is dominated when o is at
			// least as good (ties: keep the smaller, or the earlier).
			if better(o.Value, e.Value, sense) || (o.Value == e.Value && (o.charge() < e.charge() || k < i)) {
				e.Dominated = true
				break
			}
		}
	}
}

// samePool reports whether configurations a and b of the cluster's types
// lie in the same pool (a.Pool() == b.Pool() without building the names:
// pool names never clash with type names, package configset).
func samePool(a, b configset.Config) bool { return a.NodeGPUs == b.NodeGPUs && a.Type == b.Type }

// charge is the GPUs e counts against its pool (Entry.Charge).
func (e *matrixEntry) charge() int {
	if e.Charge > 0 {
		return e.Charge
	}
	return e.Config.GPUs
}

func roundTo(v, grid float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	return math.Round(v/grid) * grid
}

// ceilDiv returns ⌈a / b⌉ for a ≥ 0, b > 0 (without overflow near MaxInt).
func ceilDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}
