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
	"github.com/sia-sched/sia/placement"
)

// Action is what the host must do to a job to apply a plan.
type Action int

const (
	// Queue: the job was not running and stays waiting.
	Queue Action = iota
	// Keep: the job keeps its configuration and GPUs; nothing to do.
	Keep
	// Start: the job was not running and starts (or resumes) on the
	// allocation.
	Start
	// Resize: the job stays on its GPU type with another GPU count or node
	// count (checkpoint, restart on the new GPUs).
	Resize
	// Move: the job keeps type and count but moves to other GPUs
	// (fragmentation, rule c of placement); a checkpoint-restart.
	Move
	// Migrate: the job moves to another GPU type (checkpoint-restart).
	Migrate
	// Preempt: the job was running and loses its GPUs (checkpoint, suspend).
	Preempt
)

// String returns the action's name in lower case.
func (a Action) String() string {
	switch a {
	case Queue:
		return "queue"
	case Keep:
		return "keep"
	case Start:
		return "start"
	case Resize:
		return "resize"
	case Move:
		return "move"
	case Migrate:
		return "migrate"
	case Preempt:
		return "preempt"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Decision is the plan for one job.
type Decision struct {
	// Job is the job's ID.
	Job string
	// Action is what the host must do.
	Action Action
	// Allocation is the new configuration and its GPUs (zero when the job
	// gets none).
	Allocation Allocation
	// Replicas is the number of data-parallel replicas (GPUs / replica
	// size: a hybrid-parallel job's pipeline stages on the type).
	Replicas int
	// LocalBatch, AccumSteps and GlobalBatch are the batch size the job
	// should use: LocalBatch samples per GPU, AccumSteps extra accumulation
	// micro-batches, GlobalBatch = Replicas·LocalBatch·(AccumSteps+1). All
	// three are zero for a job a round past its deadline kept on its
	// allocation without predicting its goodput (see Scheduler.Round): the
	// job keeps the batch size it uses.
	LocalBatch, AccumSteps, GlobalBatch int
	// Goodput is the predicted goodput (samples/s × efficiency; 0 for a type
	// without a model, or a job kept without a prediction, see LocalBatch).
	Goodput float64
	// Restart says the decision checkpoint-restarts the job: Resize, Move,
	// Migrate, or a Start of a job that ran before (a resume after a
	// preemption). JobState.Advance counts it.
	Restart bool
	// RestoreUntil is, for a Restart, the round's Now plus the job's
	// restart penalty S: the expected end of the checkpoint-restore, during
	// which later rounds pin the job (JobState.RestoreUntil); zero otherwise.
	RestoreUntil time.Time
	// Pinned says the job was pinned to its current allocation.
	Pinned bool
	// Evicted says placement moved the job off its GPUs to resolve
	// fragmentation (it was re-placed, or lost its GPUs: ReasonUnplaceable).
	Evicted bool
	// Kept says the job's new allocation could not be placed and it keeps
	// its current allocation and GPUs instead.
	Kept bool
	// Reason says why the job gets no GPUs (Queue and Preempt decisions);
	// ReasonNone for the others.
	Reason QueueReason
}

// Plan is the outcome of a round.
type Plan struct {
	// Decisions has one element per job, in snapshot order.
	Decisions []Decision
	// Matrix is the goodput matrix the allocation was solved on (nil for a
	// plan decoded from JSON).
	matrix *goodputMatrix
	// Status, Objective and Bound come from the solver (StatusFeasible
	// when it stopped at a deadline, or when placement changed the
	// solver's allocation: a decision Kept or ReasonUnplaceable). They are
	// the charged problem's (each configuration counts its
	// configset.Set.Charge against its pool), except when the fill step
	// started jobs on GPUs the charges left idle, or on shapes of idle GPUs
	// the round did not offer (package doc, "Node shapes"): then Objective
	// is the plan's (each job with GPUs at its entry's value, the others at
	// waiting's), Bound the bound of the uncharged relaxation (every
	// configuration counting its GPUs, the fill's shapes included; those
	// that span pools count their best gain over waiting instead; it holds
	// every placeable plan, so it bounds this one), solved for at most the
	// solve's time and never past the deadline (the capacity-free bound,
	// every job at its best entry, when no time is left), and Status
	// StatusOptimal only when the solver's allocation was proven optimal,
	// placement kept it, and the relaxation's proven optimum equals the
	// plan's objective (the plan is then optimal among all placeable
	// plans), else StatusFeasible.
	Status           Status
	Objective, Bound float64
	// entries are the chosen entries of the rows (−1: none), see Entry.
	entries []int
	// filled lists the jobs the fill step started (fill.go).
	filled []string
	// lean says the lean round made the plan (lean.go; for tests).
	lean bool
}

// entry returns the matrix entry decision i (of Decisions) was placed
// with, or nil when the job got no GPUs or the plan has no Matrix.
func (p *Plan) entry(i int) *matrixEntry {
	if p.matrix == nil || i < 0 || i >= len(p.entries) || p.entries[i] < 0 {
		return nil
	}
	return &p.matrix.Rows[i].Entries[p.entries[i]]
}

// Decision returns the decision for a job.
func (p *Plan) Decision(job string) (Decision, bool) {
	for _, d := range p.Decisions {
		if d.Job == job {
			return d, true
		}
	}
	return Decision{}, false
}

// layout is the outcome of the placement step.
type layout struct {
	// GPUs has one element per job of the snapshot: its GPUs, or nil.
	GPUs [][]GPU
	// Choice has one element per job: the matrix entry it is placed with
	// (the solution's choice, or its current entry for a job in Kept), −1
	// when it gets no GPUs. Nil means the solution's choices.
	Choice []int
	// Evicted lists the jobs placement moved off their GPUs (Decision.
	// Evicted) and Unplaced those the solver allocated but placement could
	// not place (ReasonUnplaceable). Sorted by ID.
	Evicted, Unplaced []string
	// Kept lists the running jobs whose new allocation could not be placed
	// and that keep their current allocation and GPUs instead (sorted).
	Kept []string
	// cut says placement ran out of time (placement.Result.Cut): the
	// jobs in Unplaced wait for the deadline, not for fragmentation.
	cut bool
	// fill is what the fill step started on the GPUs left idle (fill.go).
	fill fillOutcome
	// nodeAt is validation's index of the snapshot's nodes by ID (nil: the
	// fill step builds one).
	nodeAt map[string]int
	// gpus is validation's owner of every GPU when the layout holds
	// exactly the snapshot's placements (the lean round's; nil: the fill
	// step counts the layout's GPUs).
	gpus *gpuIndex
	// shapes values the entries the fill step builds from idle GPUs (the
	// zero value: it starts jobs on the matrix's entries only; shaped.go).
	shapes shapeValuer
}

// choice returns the entry job i is placed with.
func (l *layout) choice(i int, sol solution) int {
	if l.Choice != nil {
		return l.Choice[i]
	}
	return sol.Choice[i]
}

// place places the solution under ctx (placement.PlaceSlots: once ctx
// ends, no more evictions or re-packing; the jobs left unplaced keep their
// current GPUs where keepUnplaced can give them back, or wait).
func place(ctx context.Context, snap *Snapshot, m *goodputMatrix, sol solution) (layout, error) {
	return placeWith(ctx, nil, snap, m, sol)
}

// placeWith is place with the state the cache kept from the last round
// (nil: a sync.Pool's).
func placeWith(ctx context.Context, cache *placeCache, snap *Snapshot, m *goodputMatrix, sol solution) (layout, error) {
	ps := cache.take()
	defer cache.put(ps)
	nodes, fleet := ps.placeNodes(snap)
	reqs, cur, of, pinned, want := ps.placeRequests(snap, m, sol, fleet)
	res, err := ps.placer.PlaceSlots(ctx, nodes, reqs, cur)
	if err != nil {
		return layout{}, &InputError{Field: "placement", Reason: err.Error(), Err: err}
	}
	out := layoutOf(snap, reqs, of, sol, res, want)
	owners := gpuOwners{gpus: out.GPUs}
	keepPins(snap, pinned, &out, &owners)
	slices.Sort(out.Unplaced)
	out.Unplaced = slices.Compact(out.Unplaced)
	if len(out.Unplaced) > 0 {
		idx := unplacedJobs(snap, sol, &out)
		owners.only(snap, idx)
		keepUnplaced(snap, m, sol, &out, owners.get(), idx)
	}
	return out, nil
}

// unplacedJobs returns, in snapshot order, the jobs of out.Unplaced: those
// allocated GPUs that the layout gives none.
func unplacedJobs(snap *Snapshot, sol solution, out *layout) []int {
	var idx []int
	for i, c := range sol.Choice {
		if c >= 0 && out.GPUs[i] == nil {
			idx = append(idx, i)
		}
	}
	return idx
}

// fleetShape is, per GPU type of the snapshot, its largest node and its
// node count per node size: what placeShape asks of the cluster.
type fleetShape struct {
	index map[string]int
	node  map[string]int32 // node ID -> position in the snapshot
	types []typeShape
	last  int // the type looked up last (jobs come in runs of one type)
	name  string
}

type typeShape struct {
	largest, nodes int
	sizes, counts  []int // node sizes and the nodes of each
}

// of returns the shape of type typ, or nil for a type no node has.
func (f *fleetShape) of(typ string) *typeShape {
	if f.last >= 0 && typ == f.name {
		return &f.types[f.last]
	}
	t, ok := f.index[typ]
	if !ok {
		return nil
	}
	f.last, f.name = t, typ
	return &f.types[t]
}

// poolNodes returns the number of nodes of type typ with size GPUs each
// (size 0: all its nodes).
func (f *fleetShape) poolNodes(typ string, size int) int {
	ts := f.of(typ)
	switch {
	case ts == nil:
		return 0
	case size == 0:
		return ts.nodes
	}
	if k := slices.Index(ts.sizes, size); k >= 0 {
		return ts.counts[k]
	}
	return 0
}

// placeScratch is what one placement step keeps for the next (a
// sync.Pool): the placement nodes and the fleet's shape, reused while the
// snapshot's nodes stay the same, and the arrays of the requests. Nothing
// in it reaches a plan: the layout is built in arrays of its own.
type placeScratch struct {
	placer    placement.Placer
	snapNodes []Node // the nodes that nodes and fleet describe (a copy; nil: none)
	nodes     []placement.Node
	fleet     *fleetShape
	reqs      []placement.Request
	cur       [][]placement.Slot
	slots     []placement.Slot // backs cur
	of        []int
}

var placeScratchPool = sync.Pool{New: func() any { return new(placeScratch) }}

// placeCache keeps a Scheduler's placement state from one round to the
// next (a sync.Pool loses it at every garbage collection, and a round
// allocates enough to run one): one slot, which concurrent rounds take in
// turn, a round finding it taken working with a scratch of the pool.
type placeCache struct {
	mu sync.Mutex
	ps *placeScratch
}

// take returns the kept state, or one of the pool.
func (c *placeCache) take() *placeScratch {
	if c != nil {
		c.mu.Lock()
		ps := c.ps
		c.ps = nil
		c.mu.Unlock()
		if ps != nil {
			return ps
		}
	}
	return placeScratchPool.Get().(*placeScratch)
}

// put keeps ps for the next round (or gives it back to the pool).
func (c *placeCache) put(ps *placeScratch) {
	if c == nil {
		placeScratchPool.Put(ps)
		return
	}
	c.mu.Lock()
	c.ps = ps
	c.mu.Unlock()
}

// placeNodes returns the snapshot's nodes for package placement and the
// fleet's shape, those of the last call when the nodes are the same.
func (ps *placeScratch) placeNodes(snap *Snapshot) ([]placement.Node, *fleetShape) {
	if ps.snapNodes == nil || !slices.Equal(ps.snapNodes, snap.Nodes) {
		ps.nodes, ps.fleet = placeNodes(snap)
		ps.snapNodes = slices.Clone(snap.Nodes)
	}
	ps.fleet.last, ps.fleet.name = -1, ""
	return ps.nodes, ps.fleet
}

// placeNodes returns the snapshot's nodes for package placement and the
// fleet's shape.
func placeNodes(snap *Snapshot) ([]placement.Node, *fleetShape) {
	nodes := make([]placement.Node, len(snap.Nodes))
	f := &fleetShape{index: map[string]int{}, node: make(map[string]int32, len(snap.Nodes)), last: -1}
	for i, n := range snap.Nodes {
		nodes[i] = placement.Node{ID: n.ID, Type: n.Type, GPUs: n.GPUs}
		f.node[n.ID] = int32(i)
		t, ok := f.index[n.Type]
		if !ok {
			t = len(f.types)
			f.index[n.Type] = t
			f.types = append(f.types, typeShape{})
		}
		ts := &f.types[t]
		ts.largest, ts.nodes = max(ts.largest, n.GPUs), ts.nodes+1
		if k := slices.Index(ts.sizes, n.GPUs); k >= 0 {
			ts.counts[k]++
		} else {
			ts.sizes, ts.counts = append(ts.sizes, n.GPUs), append(ts.counts, 1)
		}
	}
	return nodes, f
}

// placeRequests returns one placement request per job that is allocated
// GPUs or holds some: its entry's type, count and shape, and (in cur) its
// current GPUs as slots (capped parts of one array); of gives each
// request's job, pinned the jobs allocated their pinned entry, and want
// the GPUs the solution allocates (at least those the layout holds).
func (ps *placeScratch) placeRequests(snap *Snapshot, m *goodputMatrix, sol solution, fleet *fleetShape) (reqs []placement.Request, cur [][]placement.Slot, of, pinned []int, want int) {
	n, held := len(snap.Jobs)/16, 0 // room for jobs preempted
	for i, c := range sol.Choice {
		if c >= 0 {
			n++
			// A loop this tight fetches many entries at once (they lie
			// scattered over the matrix's memory): the loop below finds
			// them in the cache.
			want += m.Rows[i].Entries[c].Config.GPUs
		}
		held += len(snap.Jobs[i].State.Current.Placement)
	}
	n = min(n, len(snap.Jobs))
	reqs, cur, of = slices.Grow(ps.reqs[:0], n), slices.Grow(ps.cur[:0], n), slices.Grow(ps.of[:0], n)
	curs := slotList{free: slices.Grow(ps.slots[:0], held), node: fleet.node}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		r := placement.Request{Job: j.ID}
		if c := sol.Choice[i]; c >= 0 && entryRequest(&r, &m.Rows[i], c, fleet) {
			pinned = append(pinned, i)
		}
		gs := j.State.Current.Placement
		if r.GPUs == 0 && len(gs) == 0 {
			continue
		}
		reqs = append(reqs, r)
		cur = append(cur, curs.slots(gs))
		of = append(of, i)
	}
	ps.reqs, ps.cur, ps.of, ps.slots = reqs, cur, of, curs.free
	return reqs, cur, of, pinned, want
}

// slotList turns GPU lists into slots, appended to one array.
type slotList struct {
	free   []placement.Slot
	node   map[string]int32 // node ID -> position
	last   int32            // the node of the last GPU turned
	lastID string           // its ID ("" before the first)
}

// slots returns gs as slots (nil for none), capped at their length; a GPU
// on a node the snapshot does not list (validation rejects it) gets node
// −1, which placement reports.
func (c *slotList) slots(gs []GPU) []placement.Slot {
	if len(gs) == 0 {
		return nil
	}
	start := len(c.free)
	for _, g := range gs {
		if c.lastID != g.Node {
			n, ok := c.node[g.Node]
			if !ok {
				n = -1
			}
			c.last, c.lastID = n, g.Node
		}
		c.free = append(c.free, placement.Slot{Node: c.last, Index: int32(min(max(g.Index, -1), placement.MaxNodeGPUs))})
	}
	return c.free[start:len(c.free):len(c.free)]
}

// entryRequest sets the type, count, shape and pin of request r from entry
// c of row; true when c is the row's pinned entry.
func entryRequest(r *placement.Request, row *matrixRow, c int, fleet *fleetShape) bool {
	e := &row.Entries[c]
	r.Type, r.GPUs = e.Config.Type, e.Config.GPUs
	r.NodeGPUs, r.Nodes = placeShape(e.Config, fleet)
	if e.Config.Spanning() {
		r.NodeGPUs, r.Nodes = 0, 0 // the parts say both
		for _, pt := range e.Config.Parts() {
			r.Parts = append(r.Parts, placement.Part{NodeGPUs: pt.NodeGPUs, Nodes: pt.Nodes, GPUs: pt.GPUs})
		}
	}
	// A job pinned to its current configuration is never evicted to make
	// room for others; nor is one kept without a prediction (a round past
	// its deadline): moving it would restart it with no batch size to give
	// it.
	r.Pinned = c == row.Pin || e.unvalued
	if r.Pinned && len(row.spill) > 0 {
		r.NodeGPUs = 0 // its GPUs span pools: it keeps them on any node of the type
	}
	return c == row.Pin
}

// layoutOf returns the layout of placement's result (by request, see
// placeRequests) for snap: the GPUs of every job allocated and placed (one
// backing array of want GPUs at most, each job's list capped at its
// length), the evicted and unplaced jobs.
func layoutOf(snap *Snapshot, reqs []placement.Request, of []int, sol solution, res placement.SlotResult, want int) layout {
	out := layout{GPUs: make([][]GPU, len(snap.Jobs)), Evicted: requestJobs(reqs, res.Evicted), Unplaced: requestJobs(reqs, res.Unplaced), cut: res.Cut}
	backing := make([]GPU, 0, want)
	for k, gs := range res.Placements {
		i := of[k]
		if gs == nil || sol.Choice[i] < 0 {
			continue
		}
		start := len(backing)
		for _, g := range gs {
			backing = append(backing, GPU{Node: snap.Nodes[g.Node].ID, Index: int(g.Index)})
		}
		out.GPUs[i] = backing[start:len(backing):len(backing)]
	}
	return out
}

// requestJobs returns the job IDs of the requests at positions ks.
func requestJobs(reqs []placement.Request, ks []int) []string {
	if len(ks) == 0 {
		return nil
	}
	out := make([]string, len(ks))
	for n, k := range ks {
		out[n] = reqs[k].Job
	}
	return out
}

// gpuOwners maps the layout's GPUs to jobs, built when first needed (a
// pinned job moved, or jobs left unplaced): all of them, or (only) those
// that some jobs currently hold, when only those are asked about.
type gpuOwners struct {
	gpus  [][]GPU
	owner map[GPU]int
	want  map[GPU]struct{} // nil: every GPU
}

// only restricts a map not built yet to the GPUs the jobs idx hold now.
func (o *gpuOwners) only(snap *Snapshot, idx []int) {
	if o.owner != nil {
		return
	}
	o.want = map[GPU]struct{}{}
	for _, i := range idx {
		for _, g := range snap.Jobs[i].State.Current.Placement {
			o.want[g] = struct{}{}
		}
	}
}

func (o *gpuOwners) get() map[GPU]int {
	if o.owner != nil {
		return o.owner
	}
	o.owner = make(map[GPU]int, len(o.want))
	if o.want == nil {
		o.owner = make(map[GPU]int, len(o.gpus))
	}
	for i, gs := range o.gpus {
		for _, g := range gs {
			if _, ok := o.want[g]; ok || o.want == nil {
				o.owner[g] = i
			}
		}
	}
	return o.owner
}

// keepPins makes pins win for the jobs allocated their pinned entry: placement never evicts a pinned job, and should
// the placer still move one, it keeps its GPUs and whoever was put on them
// loses its placement.
func keepPins(snap *Snapshot, pinned []int, out *layout, owners *gpuOwners) {
	for _, i := range pinned {
		cur := snap.Jobs[i].State.Current.Placement
		if len(cur) == 0 || sameGPUs(out.GPUs[i], cur) {
			continue
		}
		owner := owners.get()
		for _, g := range out.GPUs[i] {
			delete(owner, g)
		}
		for _, g := range cur {
			if k, ok := owner[g]; ok && k != i {
				for _, h := range out.GPUs[k] {
					delete(owner, h)
				}
				out.GPUs[k] = nil
				out.Unplaced = append(out.Unplaced, snap.Jobs[k].ID)
			}
		}
		out.GPUs[i] = slices.Clone(cur)
		for _, g := range cur {
			owner[g] = i
		}
		out.Unplaced = slices.DeleteFunc(out.Unplaced, func(s string) bool { return s == snap.Jobs[i].ID })
	}
}

// placeShape returns the pool (NodeGPUs) and node count a configuration is
// placed with; the node count is left to placement (0) when it cannot hold
// the GPUs on nodes of the pool's size, or the pool has fewer nodes (a
// host-chosen current shape).
func placeShape(c configset.Config, fleet *fleetShape) (nodeGPUs, nodes int) {
	r := c.NodeGPUs
	if r == 0 {
		if ts := fleet.of(c.Type); ts != nil {
			r = ts.largest
		}
	}
	if c.Nodes < 1 || c.Nodes > c.GPUs || r <= 0 || ceilDiv(c.GPUs, c.Nodes) > r || c.Nodes > fleet.poolNodes(c.Type, c.NodeGPUs) {
		return c.NodeGPUs, 0
	}
	return c.NodeGPUs, c.Nodes
}

// keepUnplaced gives each running job whose new allocation could not be
// placed its current allocation back (issue: a job that cannot be resized
// must not lose its GPUs), when its current entry is in its row and not
// Dropped, its current GPUs are all free in the layout, and the
// reservations and quotas still hold with it. idx are the unplaced jobs in
// snapshot order (unplacedJobs); owner maps the layout's GPUs to jobs, at
// least those the jobs idx hold now.
func keepUnplaced(snap *Snapshot, m *goodputMatrix, sol solution, out *layout, owner map[GPU]int, idx []int) {
	if len(out.Unplaced) == 0 {
		return
	}
	choice := slices.Clone(sol.Choice)
	unplaced := make(map[string]bool, len(out.Unplaced))
	for _, id := range out.Unplaced {
		unplaced[id] = true
	}
	var h *holdCheck
	for _, i := range idx {
		j := &snap.Jobs[i]
		if !unplaced[j.ID] || !currentFree(j, &m.Rows[i], i, owner) {
			continue
		}
		if h == nil {
			h = newHoldCheck(m, m.Problem(), choice, out.GPUs) // its reservations and quotas, in row order
		}
		c := m.Rows[i].Current
		if !h.holds(i, c) {
			continue
		}
		choice[i] = c
		h.add(i, c)
		cur := j.State.Current.Placement
		out.GPUs[i] = slices.Clone(cur)
		for _, g := range cur {
			owner[g] = i
		}
		out.Kept = append(out.Kept, j.ID)
		delete(unplaced, j.ID)
	}
	if len(out.Kept) > 0 {
		out.applyKept(choice, unplaced)
	}
}

// currentFree reports whether job j (index i, row row) may be given its
// current allocation back: its current entry is in its row and not
// Dropped, and its current GPUs are all free in the layout (owner).
func currentFree(j *Job, row *matrixRow, i int, owner map[GPU]int) bool {
	cur := j.State.Current.Placement
	if row.Current < 0 || row.Entries[row.Current].Dropped || len(cur) != j.State.Current.GPUs {
		return false
	}
	for _, g := range cur {
		if k, ok := owner[g]; ok && k != i {
			return false
		}
	}
	return true
}

// applyKept records the jobs of l.Kept, given their current allocation
// back: the entries placed (choice, −1 for the jobs with no GPUs), the
// jobs still unplaced, the evicted jobs that are not kept.
func (l *layout) applyKept(choice []int, unplaced map[string]bool) {
	for i := range choice {
		if l.GPUs[i] == nil {
			choice[i] = -1
		}
	}
	l.Choice = choice
	l.Unplaced = slices.DeleteFunc(l.Unplaced, func(id string) bool { return !unplaced[id] })
	l.Evicted = slices.DeleteFunc(l.Evicted, func(id string) bool { return slices.Contains(l.Kept, id) })
	slices.Sort(l.Kept)
}

// holdCheck tells whether a job that keeps the GPUs it holds breaks the
// matrix's pool capacities, reservations or quotas, given the jobs already
// placed (GPUs non-nil, each entry counted with its Charge): the usage per
// pool and quota and the number of limits it breaks are kept up to date
// as jobs are added, so that each check costs O(the quotas covering the
// job), not O(jobs).
type holdCheck struct {
	m      *goodputMatrix
	p      *ilp.Problem
	pool   map[string]int
	quota  []int
	qOf    [][]int // the quotas (not AllJobs) covering each row
	qAll   []int   // the AllJobs quotas
	broken int     // limits the placed jobs break
}

func newHoldCheck(m *goodputMatrix, p *ilp.Problem, choice []int, gpus [][]GPU) *holdCheck {
	h := &holdCheck{m: m, p: p, pool: map[string]int{}, quota: make([]int, len(p.Quotas)), qOf: make([][]int, len(choice))}
	for q := range p.Quotas {
		if p.Quotas[q].AllJobs {
			h.qAll = append(h.qAll, q)
			continue
		}
		for _, i := range p.Quotas[q].Jobs {
			if i >= 0 && i < len(h.qOf) && !slices.Contains(h.qOf[i], q) {
				h.qOf[i] = append(h.qOf[i], q)
			}
		}
	}
	for i, c := range choice {
		if c >= 0 && gpus[i] != nil {
			h.count(i, c, false, true)
		}
	}
	return h
}

// count adds (or, with apply false, only tries) job i on entry c, with the
// GPUs it holds (exact) or the entry's Charge, in every pool the entry uses,
// and returns the number of limits broken then.
func (h *holdCheck) count(i, c int, exact, apply bool) int {
	uses := usesOf(&h.m.Rows[i].Entries[c], exact)
	broken := h.broken
	over := func(used, limit int) int {
		if used > limit {
			return 1
		}
		return 0
	}
	for _, o := range uses {
		if c, ok := h.m.Capacity[o.Type]; ok {
			limit := c - h.p.Reserved[o.Type]
			broken += over(h.pool[o.Type]+o.GPUs, limit) - over(h.pool[o.Type], limit)
		}
		if apply {
			h.pool[o.Type] += o.GPUs
		}
	}
	for _, qs := range [2][]int{h.qOf[i], h.qAll} {
		for _, q := range qs {
			qu := &h.p.Quotas[q]
			if n := quotaUse(qu, uses); n > 0 {
				broken += over(h.quota[q]+n, qu.Limit) - over(h.quota[q], qu.Limit)
				if apply {
					h.quota[q] += n
				}
			}
		}
	}
	if apply {
		h.broken = broken
	}
	return broken
}

// holds reports whether job i keeping exactly the GPUs of entry c (its
// Config.GPUs, per pool) breaks no limit.
func (h *holdCheck) holds(i, c int) bool { return h.count(i, c, true, false) == 0 }

// add counts job i, now placed on entry c, with the entry's Charge.
func (h *holdCheck) add(i, c int) { h.count(i, c, false, true) }

func sameGPUs(a, b []GPU) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.Equal(a, b) {
		return true // the common case: the same list in the same order
	}
	set := make(map[GPU]bool, len(a))
	for _, g := range a {
		set[g] = true
	}
	for _, g := range b {
		if !set[g] {
			return false
		}
	}
	return true
}

// decide turns matrix, solution and layout into the plan's decisions.
func decide(snap *Snapshot, m *goodputMatrix, sol solution, lay layout, o *Options) ([]Decision, []int) {
	evicted, unplaced, kept := idSet(lay.Evicted), idSet(lay.Unplaced), idSet(lay.Kept)
	var why *reasoner
	out := make([]Decision, len(snap.Jobs))
	entries := make([]int, len(snap.Jobs))
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		row := &m.Rows[i]
		d := &out[i] // written in place: a Decision is large, and copying one holding pointers costs write barriers
		d.Job, d.Evicted, d.Kept = j.ID, evicted[j.ID], kept[j.ID]
		c := lay.choice(i, sol)
		entries[i] = -1
		if c >= 0 && lay.GPUs[i] != nil {
			entries[i] = c
			e := &row.Entries[c]
			d.Pinned = c == row.Pin
			d.Allocation = Allocation{Type: e.Config.Type, Nodes: nodesOf(lay.GPUs[i]), GPUs: e.Config.GPUs, Placement: lay.GPUs[i]}
			d.Replicas = e.Replicas
			d.Goodput = e.Choice.Goodput
			d.LocalBatch, d.AccumSteps, d.GlobalBatch = e.Choice.LocalBatch, e.Choice.AccumSteps, e.Choice.GlobalBatch
			if !e.unvalued && !batchConsistent(d.Replicas, d.LocalBatch, d.AccumSteps, d.GlobalBatch) {
				d.LocalBatch, d.AccumSteps, d.GlobalBatch = defaultBatch(j, e)
			}
		}
		d.Action = action(j.State.Current, d.Allocation)
		if d.Restart = restarts(&j.State, d.Action); d.Restart {
			d.RestoreUntil = snap.Now.Add(o.restartCost(j))
		}
		if d.Action == Queue || d.Action == Preempt {
			if why == nil {
				why = newReasoner(snap, m, lay.reasonSolution(sol), o)
			}
			d.Reason = why.reason(i, c >= 0 || unplaced[j.ID])
			if d.Reason == ReasonUnplaceable && lay.cut {
				d.Reason = ReasonDeadline // placement stopped at its time, see Scheduler.Round
			}
		}
	}
	return out, entries
}

func idSet(ids []string) map[string]bool {
	if len(ids) == 0 {
		return nil // nothing to find: lookups of a nil map are false
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// nodesOf returns the number of distinct nodes of gs (a job spans few
// nodes: a scan of the nodes seen so far beats a map).
func nodesOf(gs []GPU) int {
	var buf [16]string
	seen := buf[:0]
	var many map[string]struct{} // beyond 16 nodes: linear, not quadratic
	prev := ""
next:
	for k, g := range gs {
		if k > 0 && g.Node == prev {
			continue // placements come node by node
		}
		prev = g.Node
		if many != nil {
			many[g.Node] = struct{}{}
			continue
		}
		for _, n := range seen {
			if n == g.Node {
				continue next
			}
		}
		if seen = append(seen, g.Node); len(seen) > len(buf) {
			many = make(map[string]struct{}, 2*len(seen))
			for _, n := range seen {
				many[n] = struct{}{}
			}
		}
	}
	if many != nil {
		return len(many)
	}
	return len(seen)
}

// defaultBatch is the batch size for an entry without a prediction (a type
// without a model): the initial batch M0 (a fixed batch for strong-scaling
// and rigid jobs), split over the replicas as goodput.Model.Best splits its
// candidates (goodput.SplitBatch).
// batchConsistent reports whether a predicted batch (an Evaluator's, or
// goodput's) is one a Decision may carry: positive sizes with
// global = replicas·local·(accum+1), computed without overflow.
func batchConsistent(replicas, local, accum, global int) bool {
	if replicas < 1 || local < 1 || accum < 0 || global < 1 || accum == math.MaxInt {
		return false
	}
	rl := replicas * local
	if rl/replicas != local {
		return false
	}
	g := rl * (accum + 1)
	return g/(accum+1) == rl && g == global
}

func defaultBatch(j *Job, e *matrixEntry) (local, accum, global int) {
	m, src := j.Models.Model(e.Config.Type)
	r := max(e.Replicas, 1)
	if m.Hybrid() {
		return 1, max(m.MicroBatches-1, 0), max(m.MicroBatches, 1) * r
	}
	global = max(m.InitBatch, 1)
	if m.FixedBatch > 0 {
		global = m.FixedBatch
	} else if j.Kind != Adaptive && m.MaxBatch > 0 {
		global = m.MaxBatch
	}
	bmax := m.Limits.MaxLocalBatch
	if bmax <= 0 || src == bootstrap.None && m.Limits.MaxLocalBatch == 0 {
		bmax = global
	}
	local, accum = goodput.SplitBatch(global, r, bmax)
	return local, accum, r * local * (accum + 1)
}

func action(cur, next Allocation) Action {
	switch {
	case !cur.Running() && !next.Running():
		return Queue
	case !cur.Running():
		return Start
	case !next.Running():
		return Preempt
	case cur.Type != next.Type:
		return Migrate
	case cur.GPUs != next.GPUs || cur.Nodes != next.Nodes:
		return Resize
	case len(cur.Placement) > 0 && !sameGPUs(cur.Placement, next.Placement):
		return Move
	}
	return Keep
}
