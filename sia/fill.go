package sia

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/placement"
)

// The fill step runs after placement. The solver counts each configuration
// against its pool's capacity with its charge (configset.Set.Charge): a part
// off its node's chain of sizes (a rigid 5 on 15-GPU nodes, whose sizes are
// 1, 3 and 15) blocks the smallest chain size that holds it, so that every
// allocation the solver returns is placeable. Once the allocation is placed
// the GPUs such a charge blocked but no job holds are idle; fill starts
// waiting jobs on them, so that no GPU is left idle by construction beside
// a job that fits it and is worth starting.
//
// Fill takes the jobs that are not running and hold no GPUs in the layout
// (waiting, or allocated by the solver but not placed), and their entries
// the solver was offered (neither Dropped, Dominated nor Invalid) whose
// value beats waiting (Value above Unallocated when maximising, below when
// minimising: the goodput values the solver used). It tries them by gain
// per GPU, best first (ties: more gain, then snapshot order, then entry
// order), and starts each job on its first entry that
//   - can be placed exactly with the entry's shape on GPUs no job holds: its
//     node count in its pool (placement.Shape, or an even split when the
//     entry asks for another node count), each part of a spanning entry in
//     its own pool; parts go largest first to the node with the fewest idle
//     GPUs that hold them (ties: the earlier node), the lowest free indices;
//   - keeps every snapshot quota covering the job and every reservation
//     within its limit, counting the GPUs the jobs hold (not their charges:
//     the limits are on GPUs, and the charges are the solver's device to
//     keep its allocations placeable).
//
// The jobs still waiting then get a second pass, on shapes of the idle
// GPUs the round did not offer them (shaped.go).
//
// Then each job it started (not one put back on its current GPUs) grows: in
// the order they were started, it gives its GPUs back and takes the entry
// of its row with the best value above its own (ties: fewer GPUs, then
// entry order) that holds the limits and fits the idle GPUs by its shape as
// above (its current entry only on exactly its current GPUs), or its GPUs
// again when none does. The job starts this round anyway, so a larger
// entry costs no extra restart; best gain per GPU picks which jobs start,
// and the grow step keeps the idle GPUs beside them from staying idle when
// a larger entry of theirs is worth more (on two 12-GPU nodes beside a
// rigid 5, a job of at most 7 GPUs takes 4, not 2). A job that grows onto
// other nodes gives GPUs back, so the jobs grow in passes until none does
// (or the tries the step is sized for are spent): then none of the jobs
// started could take a more valuable entry that fits.
//
// Jobs that hold GPUs, pinned or not, are never touched. Fill's work is
// sized before it starts: it scans the waiting jobs' entries in snapshot
// order, as many as the time left to placement's end affords at
// fillCostPerEntry each once the count over the fleet's GPUs is paid for
// (fillCostPerGPU each), and does nothing once that time has passed; the
// grow step tries at most twice the entries of the started jobs' rows,
// within the same per-entry cost.

// fillCostPerEntry, fillCostPerGPU and fillCostFixed size the fill step:
// per candidate entry scanned (the gain, its sort, the tries, the grow
// step's tries and the GPUs listed for the jobs started), per GPU of the
// fleet (the idle GPUs' count over the layout) and per fill. BenchmarkFill's CPU profile (load 15–20
// on 2 cores, so rough): about 1.4 ms of CPU per fill of 6,000 GPUs and 407
// entries starting 120 jobs (0.5 ms of it counting the GPUs), 0.12 ms for
// 750 GPUs and 57 entries; the grow step added about 15–25 % (wall clock,
// load 8 on 2 cores: 1.3–1.5 ms before, 1.5–1.9 ms after at 6,000 GPUs);
// the constants give 1.97 and 0.31 ms.
const (
	fillCostPerEntry = 2500 * time.Nanosecond
	fillCostPerGPU   = 150 * time.Nanosecond
	fillCostFixed    = 50 * time.Microsecond
)

// fillOutcome is what the fill step did: the jobs it started (sorted IDs),
// and, when it started some, the plan's objective and a bound valid for it
// (see relaxedPlanBound).
type fillOutcome struct {
	Filled           []string
	Objective, Bound float64
	// Optimal says the plan is as good as the uncharged relaxation's
	// proven optimum, and so optimal among all placeable plans.
	Optimal bool
}

// fillPoolKey names the nodes of type typ with size GPUs each (size 0: every
// node of the type).
type fillPoolKey struct {
	typ  string
	size int
}

// filler is the state of one fill: the idle GPUs per node and pool, and
// the GPUs held per type and quota.
type filler struct {
	snap    *Snapshot
	m       *goodputMatrix
	nodeIdx map[string]int        // node ID → index in snap.Nodes
	gpus    *gpuIndex             // validation's GPU owners, when the layout holds the snapshot's placements (layout.gpus)
	idle    []int                 // per node: GPUs no job of the layout holds
	held    [][]int               // per node: the indices held
	free    map[int][]bool        // per node placed on: index free (built when first used)
	pools   map[fillPoolKey][]int // nodes with idle GPUs, by idle GPUs then node order
	poolOf  []string              // per node: its pool's capacity row (configset.Config.Pool)
	typeOf  map[string]int        // type → its position in types
	typeUse map[string]int        // GPUs held per type (types with a reservation)
	quotaOf [][]int               // per row: the quotas covering it
	qUse    []int                 // per quota of m.Quotas: GPUs held it counts
	parts   []fillPart            // placePart's scratch
	// types are the fleet's types (size 0 shapes, see nodeShape) with
	// their idle GPUs, typeAt each node's position in them; shapes values
	// the entries the second pass builds from idle GPUs (its zero value:
	// no second pass, see shaped.go), which stops at stop (zero: no limit).
	types  []nodeShape
	typeAt []int
	shapes shapeValuer
	stop   time.Time
	// freeBuf and gpuBuf are the arrays freeOn's and place's slices are
	// cut from (fillChunk elements at a time).
	freeBuf []bool
	gpuBuf  []GPU
}

// fillChunk is the number of elements the filler's arrays grow by.
const fillChunk = 256

// fillCandidate is an entry of a waiting job that fill may start it on.
type fillCandidate struct {
	row, entry, gpus int
	gain             float64
}

// fillIdle starts waiting jobs on the GPUs the layout leaves idle (see the
// comment at the top of this file), changing lay in place: their GPUs,
// lay.Choice, and lay.Unplaced (a job the solver allocated but placement
// could not place may be started on another entry). budget is the time
// the step may take (< 0: no limit; 0: nothing is done).
func fillIdle(snap *Snapshot, m *goodputMatrix, sol solution, lay *layout, budget time.Duration) []string {
	if budget == 0 || len(snap.Nodes) == 0 || !mayFill(m, sol, lay) {
		return nil
	}
	start := time.Now()
	gpus, held := 0, 0
	for _, n := range snap.Nodes {
		gpus += n.GPUs
	}
	for _, gs := range lay.GPUs {
		held += len(gs)
	}
	if held >= gpus {
		return nil // no GPU is idle
	}
	if budget > 0 {
		// counting the idle GPUs per node takes a look at every GPU held
		if budget -= time.Duration(gpus) * fillCostPerGPU; budget <= 0 {
			return nil
		}
	}
	rows := fillRows(snap, m, lay, budget)
	if len(rows) == 0 {
		return nil
	}
	f := newFiller(snap, m, lay)
	if f == nil {
		return nil // no GPU is idle
	}
	if budget > 0 {
		f.stop = start.Add(budget)
	}
	if f.shapes.on() && !f.shapes.stop.IsZero() && (f.stop.IsZero() || f.shapes.stop.Before(f.stop)) {
		f.stop = f.shapes.stop
	}
	cands := f.candidates(rows)
	if len(cands) == 0 {
		return nil
	}
	choice := make([]int, len(snap.Jobs))
	for i := range choice {
		choice[i] = lay.choice(i, sol)
	}
	filled, kept := f.start(cands, choice, lay)
	if len(filled) == 0 {
		return nil
	}
	lay.Choice = choice
	slices.Sort(filled)
	lay.Unplaced = slices.DeleteFunc(lay.Unplaced, func(id string) bool { _, ok := slices.BinarySearch(filled, id); return ok })
	lay.Evicted = slices.DeleteFunc(lay.Evicted, func(id string) bool { return kept[id] }) // back on its GPUs
	return filled
}

// start tries the candidates in order and starts each job on the first of
// its entries that holds the limits and fits the idle GPUs by its shape (a
// job's current entry only on exactly its current GPUs: kept), setting its
// GPUs in lay and its entry in choice; it returns the jobs started and
// those kept on their current GPUs.
func (f *filler) start(cands []fillCandidate, choice []int, lay *layout) (filled []string, kept map[string]bool) {
	done := make([]bool, len(f.m.Rows))
	kept = map[string]bool{}
	var grow []int
	for _, c := range cands {
		if done[c.row] {
			continue
		}
		row := &f.m.Rows[c.row]
		e := &row.Entries[c.entry]
		var uses []ilp.Option // the pools the entry takes, which only quotas need
		if len(f.quotasOf(c.row)) > 0 {
			uses = usesOf(e, true)
		}
		if !f.limitsHold(c.row, e, uses) {
			continue
		}
		var gs []GPU
		ok := false
		j := &f.snap.Jobs[c.row]
		if c.entry == row.Current {
			gs, ok = f.keep(j.State.Current.Placement, e.Config.GPUs)
			kept[j.ID] = ok
		} else {
			gs, ok = f.place(e.Config)
		}
		if !ok {
			continue
		}
		f.take(c.row, e, uses, gs)
		lay.GPUs[c.row] = gs
		choice[c.row] = c.entry
		done[c.row] = true
		filled = append(filled, j.ID)
		if !kept[j.ID] {
			grow = append(grow, c.row)
		}
	}
	shaped, more := f.startShaped(cands, done, choice, lay)
	filled, grow = append(filled, shaped...), append(grow, more...)
	f.growAll(grow, choice, lay, kept)
	return filled, kept
}

// growAll grows the jobs started, in the order they were started, in
// passes until none grows: a job that grows onto other nodes gives idle
// GPUs back that a job grown before it may use. Each growth raises one
// job's value, so the passes end; they are sized before they start, at
// most as many tries as the jobs' rows have entries, twice over.
func (f *filler) growAll(grow []int, choice []int, lay *layout, kept map[string]bool) {
	tries := 0
	for _, i := range grow {
		tries += 2 * len(f.m.Rows[i].Entries)
	}
	for changed := true; changed && tries > 0; {
		changed = false
		for _, i := range grow {
			if kept[f.snap.Jobs[i].ID] {
				continue // on its current GPUs: moving it would restart it
			}
			grew, back, n := f.grow(i, choice, lay)
			tries -= n
			changed = changed || grew
			if back {
				kept[f.snap.Jobs[i].ID] = true
			}
		}
	}
}

// grow lets job i, started by fill on entry choice[i] and GPUs lay.GPUs[i]
// (it starts this round anyway, so a larger entry costs no extra restart),
// take the best-valued entry of its row that is worth more than the one it
// has, holds the limits and fits the idle GPUs with its own given back, by
// its evaluated shape; its current entry only on exactly its current GPUs.
// When none does it keeps the GPUs it has. It reports whether the job went
// back on its current GPUs (kept). Each entry of the row is tried at most
// once, so the step costs no more than the start's scan of the row.
func (f *filler) grow(i int, choice []int, lay *layout) (grew, kept bool, tries int) {
	row := &f.m.Rows[i]
	from := choice[i]
	cands := f.betterEntries(row, from)
	if len(cands) == 0 {
		return false, false, 1
	}
	e := &row.Entries[from]
	gs := lay.GPUs[i]
	uses := usesOf(e, true)
	f.release(i, e, uses, gs)
	for _, k := range cands {
		tries++
		to := &row.Entries[k]
		tu := usesOf(to, true)
		if !f.limitsHold(i, to, tu) {
			continue
		}
		var ng []GPU
		ok := false
		if k == row.Current {
			ng, ok = f.keep(f.snap.Jobs[i].State.Current.Placement, to.Config.GPUs)
		} else {
			ng, ok = f.place(to.Config)
		}
		if !ok {
			continue
		}
		f.take(i, to, tu, ng)
		lay.GPUs[i] = ng
		choice[i] = k
		return true, k == row.Current, tries
	}
	f.retake(gs) // none fits: it gets back the GPUs it gave up
	f.take(i, e, uses, gs)
	return false, false, tries
}

// betterEntries returns the offered, valued entries of row worth more than
// entry from (and more than waiting), best value first (ties: fewer GPUs,
// then entry order).
func (f *filler) betterEntries(row *matrixRow, from int) []int {
	cur := row.Entries[from].Value
	var out []int
	for k := range row.Entries {
		e := &row.Entries[k]
		if k == from || e.Dropped || e.Dominated || e.Invalid || e.unvalued || e.Config.GPUs <= 0 || math.IsInf(e.Value, 0) {
			continue
		}
		if better(e.Value, cur, f.m.Sense) && better(e.Value, row.Unallocated, f.m.Sense) {
			out = append(out, k)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		ea, eb := &row.Entries[a], &row.Entries[b]
		if better(ea.Value, eb.Value, f.m.Sense) {
			return -1
		}
		if better(eb.Value, ea.Value, f.m.Sense) {
			return 1
		}
		return cmp.Or(cmp.Compare(ea.Config.GPUs, eb.Config.GPUs), cmp.Compare(a, b))
	})
	return out
}

// release gives job i's GPUs gs on entry e (using uses) back to the idle
// GPUs and the limits: the inverse of take and of the GPUs' taking.
func (f *filler) release(i int, e *matrixEntry, uses []ilp.Option, gs []GPU) {
	if f.m.Reserved[e.Config.Type] > 0 {
		f.typeUse[e.Config.Type] -= len(gs)
	}
	for _, q := range f.quotasOf(i) {
		f.qUse[q] -= quotaUse(&f.m.Quotas[q], uses)
	}
	for a := 0; a < len(gs); {
		k := f.nodeIdx[gs[a].Node]
		free := f.freeOn(k)
		b := a
		for ; b < len(gs) && gs[b].Node == gs[a].Node; b++ {
			free[gs[b].Index] = true
		}
		f.takeIdle(k, a-b) // gives b−a back
		a = b
	}
}

// retake takes again the GPUs gs that release gave back.
func (f *filler) retake(gs []GPU) {
	for a := 0; a < len(gs); {
		k := f.nodeIdx[gs[a].Node]
		free := f.freeOn(k)
		b := a
		for ; b < len(gs) && gs[b].Node == gs[a].Node; b++ {
			free[gs[b].Index] = false
		}
		f.takeIdle(k, b-a)
		a = b
	}
}

// mayFill reports whether the fill step can improve on the layout: not
// when the solver proved its allocation optimal, placement kept it, no
// entry is charged more than its GPUs (the charged problem is then the
// uncharged one, and no job the fill could start on an entry is worth it)
// and no waiting job could take a shape of idle GPUs over several pools
// (mayShape).
func mayFill(m *goodputMatrix, sol solution, lay *layout) bool {
	if sol.Status != StatusOptimal || m.Partial || len(lay.Unplaced) > 0 || len(lay.Kept) > 0 {
		return true
	}
	for i := range m.Rows {
		for k := range m.Rows[i].Entries {
			if e := &m.Rows[i].Entries[k]; !e.Dropped && !e.Dominated && e.charge() > e.Config.GPUs {
				return true
			}
		}
	}
	return lay.shapes.on() && mayShape(m, sol)
}

// mayShape reports whether a job the solution leaves waiting has an entry
// worth more than waiting on a type with several pools whose GPUs the
// solution leaves free hold its count: each pool may be too full for it
// while the idle GPUs of the type together are not (shaped.go).
func mayShape(m *goodputMatrix, sol solution) bool {
	var free map[string]int // per type with several pools
	for t, ps := range m.Pools {
		if len(ps) > 1 {
			if free == nil {
				free = map[string]int{}
			}
			free[t] = m.TypeCapacity(t)
		}
	}
	if free == nil {
		return false
	}
	for i, c := range sol.Choice {
		if c >= 0 {
			e := &m.Rows[i].Entries[c]
			if _, ok := free[e.Config.Type]; ok {
				free[e.Config.Type] -= e.Config.GPUs
			}
		}
	}
	for i, c := range sol.Choice {
		if c >= 0 {
			continue
		}
		row := &m.Rows[i]
		for k := range row.Entries {
			e := &row.Entries[k]
			if f, ok := free[e.Config.Type]; ok && e.Config.GPUs <= f && !e.Dropped && !e.Invalid && better(e.Value, row.Unallocated, m.Sense) {
				return true
			}
		}
	}
	return false
}

// fillRows returns the rows fill may start, in snapshot order: jobs that
// hold no GPUs in the layout (waiting, or running and preempted), are not
// pinned and have entries; as many as budget affords (by their entries, at
// fillCostPerEntry each).
func fillRows(snap *Snapshot, m *goodputMatrix, lay *layout, budget time.Duration) []int {
	var entries int
	afford := math.MaxInt
	if budget > 0 {
		afford = int((budget - fillCostFixed) / fillCostPerEntry)
		if afford <= 0 {
			return nil
		}
	}
	var rows []int
	for i := range snap.Jobs {
		row := &m.Rows[i]
		if lay.GPUs[i] != nil || row.Pin >= 0 || len(row.Entries) == 0 {
			continue
		}
		if entries += len(row.Entries); entries > afford {
			break
		}
		rows = append(rows, i)
	}
	return rows
}

// newFiller counts the layout's idle GPUs per node and pool and the GPUs
// held per reserved type and per quota; nil when no GPU is idle. It reads
// each GPU held once, looking its node up once per run of GPUs on one node.
func newFiller(snap *Snapshot, m *goodputMatrix, lay *layout) *filler {
	perNode := make([]int, 3*len(snap.Nodes)) // the idle GPUs, the shape and the type of each node
	f := &filler{snap: snap, m: m, nodeIdx: lay.nodeAt, gpus: lay.gpus, idle: perNode[:len(snap.Nodes):len(snap.Nodes)],
		held: make([][]int, len(snap.Nodes)), free: map[int][]bool{}, pools: map[fillPoolKey][]int{}, poolOf: make([]string, len(snap.Nodes)),
		typeOf: map[string]int{}, typeUse: map[string]int{}, shapes: lay.shapes}
	build := f.nodeIdx == nil // else validation's
	if build {
		f.nodeIdx = make(map[string]int, len(snap.Nodes))
	}
	// The node shapes (type and size; few), each looked up in the maps
	// once, and each node's shape: a type's nodes of two sizes may
	// alternate, so runs of one shape can be one node long.
	sh := fillNodeShapes{shapes: make([]nodeShape, 0, len(m.Capacity)), types: make([]nodeShape, 0, len(m.Types))} // one shape per pool
	shapeOf := perNode[len(snap.Nodes) : 2*len(snap.Nodes) : 2*len(snap.Nodes)]
	f.typeAt = perNode[2*len(snap.Nodes):]
	for k := range snap.Nodes {
		n := &snap.Nodes[k]
		if build {
			f.nodeIdx[n.ID] = k
		}
		f.idle[k] = n.GPUs
		s, added := sh.find(n)
		shapeOf[k] = s
		if added {
			ta := sh.shapes[s].typeAt
			f.typeOf[n.Type] = ta
			sh.types[ta].largest = max(sh.types[ta].largest, n.GPUs)
			sh.shapes[s].pool = n.Type
			if ps := m.Pools[n.Type]; len(ps) > 1 || len(ps) == 1 && ps[0] != n.Type {
				sh.shapes[s].pool = configset.PoolName(n.Type, n.GPUs)
			}
			sh.shapes[s].reserved = m.Reserved[n.Type] > 0
		}
		f.poolOf[k] = sh.shapes[s].pool
		f.typeAt[k] = sh.shapes[s].typeAt
	}
	f.quotaRows()
	f.qUse = make([]int, len(m.Quotas))
	if f.gpus != nil {
		// The snapshot's placements, as validation recorded them: the
		// held GPUs of a node are its slots with an owner.
		for k := range f.idle {
			for _, o := range f.gpus.slots(k) {
				if o != 0 {
					f.idle[k]--
				}
			}
		}
	}
	var perPool map[string]int
	for i, gs := range lay.GPUs {
		if len(gs) == 0 {
			continue
		}
		counted := len(f.quotasOf(i)) > 0
		if f.gpus != nil && !counted {
			continue // counted above
		}
		if counted {
			if perPool == nil {
				perPool = map[string]int{}
			}
			clear(perPool)
		}
		last, k := "", -1
		for _, g := range gs {
			if g.Node != last || k < 0 {
				var ok bool
				if k, ok = f.nodeIdx[g.Node]; !ok {
					k = -1
				}
				last = g.Node
			}
			if k < 0 {
				continue
			}
			if f.gpus == nil {
				f.idle[k]--
			}
			if counted {
				perPool[f.poolOf[k]]++
			}
		}
		if counted {
			uses := make([]ilp.Option, 0, len(perPool))
			for _, p := range sortedKeys(perPool) {
				uses = append(uses, ilp.Option{Type: p, GPUs: perPool[p]})
			}
			for _, q := range f.quotasOf(i) {
				f.qUse[q] += quotaUse(&m.Quotas[q], uses)
			}
		}
	}
	f.heldOnIdle(lay)
	total := 0
	// Nodes with idle GPUs per pool (by type and size, and by type), in
	// node order, one array for the lists; the GPUs held per reserved type.
	for k := range snap.Nodes {
		s := &sh.shapes[shapeOf[k]]
		if s.reserved {
			s.held += snap.Nodes[k].GPUs - f.idle[k]
		}
		if f.idle[k] > 0 {
			total += f.idle[k]
			sh.types[s.typeAt].gpus += f.idle[k]
			s.idle++
			sh.types[s.typeAt].idle++
		}
	}
	buf := make([]int, 0, 2*len(snap.Nodes))
	cut := func(n int) []int {
		var out []int
		out, buf = buf[len(buf):len(buf):len(buf)+n], buf[:len(buf)+n]
		return out
	}
	for s := range sh.shapes {
		sh.shapes[s].nodes = cut(sh.shapes[s].idle)
	}
	for t := range sh.types {
		sh.types[t].nodes = cut(sh.types[t].idle)
	}
	for k := range snap.Nodes {
		if f.idle[k] > 0 {
			s := &sh.shapes[shapeOf[k]]
			s.nodes = append(s.nodes, k)
			sh.types[s.typeAt].nodes = append(sh.types[s.typeAt].nodes, k)
		}
	}
	for s := range sh.shapes {
		sp := &sh.shapes[s]
		if sp.reserved {
			f.typeUse[sp.typ] += sp.held
		}
		if len(sp.nodes) > 0 { // a pool with no idle node has no list
			f.pools[fillPoolKey{sp.typ, sp.size}] = sp.nodes
		}
	}
	for t := range sh.types {
		if tp := &sh.types[t]; len(tp.nodes) > 0 {
			f.pools[fillPoolKey{tp.typ, 0}] = tp.nodes
		}
	}
	if total == 0 {
		return nil
	}
	f.types = sh.types
	// By idle GPUs, then node order (best fit), sorted as keys of both
	// packed in one integer (no comparison function).
	var keys []uint64
	for _, ns := range f.pools {
		if len(snap.Nodes) > math.MaxUint32 || slices.ContainsFunc(ns, func(k int) bool { return f.idle[k] > math.MaxInt32 }) {
			slices.SortFunc(ns, func(a, b int) int { return cmp.Or(cmp.Compare(f.idle[a], f.idle[b]), cmp.Compare(a, b)) })
			continue // beyond the packed keys
		}
		keys = keys[:0]
		for _, k := range ns {
			keys = append(keys, uint64(f.idle[k])<<32|uint64(uint32(k)))
		}
		slices.Sort(keys)
		for x, key := range keys {
			ns[x] = int(uint32(key))
		}
	}
	return f
}

// sameShape reports whether nodes a and b have one type and size.
func sameShape(a, b *Node) bool { return a.GPUs == b.GPUs && a.Type == b.Type }

// fillNodeShapes are the node shapes of a snapshot (newFiller), in order of
// first appearance, and its types.
type fillNodeShapes struct {
	shapes []nodeShape
	types  []nodeShape // per type (size 0)
	last   int         // the shape found last
}

// nodeShape is a node shape (a type and size; size 0: all the type's
// nodes) with its pool's name, whether its type has a reservation, the
// GPUs held on its nodes, and its nodes with idle GPUs (idle: how many).
type nodeShape struct {
	typ          string
	size, typeAt int
	pool         string
	reserved     bool
	held, idle   int
	nodes        []int
	// of a type (size 0): its idle GPUs and the GPUs of its largest node
	gpus, largest int
}

// find returns node n's shape, and whether it was added (a new shape).
func (sh *fillNodeShapes) find(n *Node) (int, bool) {
	if l := sh.last; l < len(sh.shapes) && sh.shapes[l].size == n.GPUs && sh.shapes[l].typ == n.Type {
		return l, false
	}
	for s := range sh.shapes {
		if sh.shapes[s].size == n.GPUs && sh.shapes[s].typ == n.Type {
			sh.last = s
			return s, false
		}
	}
	t := 0
	for t < len(sh.types) && sh.types[t].typ != n.Type {
		t++
	}
	if t == len(sh.types) {
		sh.types = append(sh.types, nodeShape{typ: n.Type, typeAt: t})
	}
	sh.shapes = append(sh.shapes, nodeShape{typ: n.Type, size: n.GPUs, typeAt: t})
	sh.last = len(sh.shapes) - 1
	return sh.last, true
}

// heldOnIdle records the GPU indices held on the nodes with idle GPUs, in
// one array (each node's slice holds exactly its held GPUs).
func (f *filler) heldOnIdle(lay *layout) {
	if f.gpus != nil {
		return // freeOn reads the owners
	}
	n := 0
	for k := range f.idle {
		if f.idle[k] > 0 {
			n += f.snap.Nodes[k].GPUs - f.idle[k]
		}
	}
	buf := make([]int, n)
	for k := range f.idle {
		if f.idle[k] > 0 {
			h := f.snap.Nodes[k].GPUs - f.idle[k]
			f.held[k], buf = buf[:0:h], buf[h:]
		}
	}
	for _, gs := range lay.GPUs {
		last, k := "", -1
		for _, g := range gs {
			if g.Node != last {
				var ok bool
				if k, ok = f.nodeIdx[g.Node]; !ok {
					k = -1
				}
				last = g.Node
			}
			if k >= 0 && f.idle[k] > 0 {
				f.held[k] = append(f.held[k], g.Index)
			}
		}
	}
}

// quotaRows lists, per row, the quotas covering it.
func (f *filler) quotaRows() {
	if len(f.m.Quotas) == 0 {
		return // quotasOf: none
	}
	f.quotaOf = make([][]int, len(f.m.Rows))
	for q := range f.m.Quotas {
		qu := &f.m.Quotas[q]
		if qu.AllJobs {
			for i := range f.quotaOf {
				f.quotaOf[i] = append(f.quotaOf[i], q)
			}
			continue
		}
		for _, i := range qu.Jobs {
			if i >= 0 && i < len(f.quotaOf) && !slices.Contains(f.quotaOf[i], q) {
				f.quotaOf[i] = append(f.quotaOf[i], q)
			}
		}
	}
}

// quotasOf returns the quotas covering row i (quotaRows).
func (f *filler) quotasOf(i int) []int {
	if f.quotaOf == nil {
		return nil
	}
	return f.quotaOf[i]
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// candidates returns the offered entries of rows worth more than waiting
// and no larger than their type's idle GPUs, best gain per GPU first.
func (f *filler) candidates(rows []int) []fillCandidate {
	var out []fillCandidate
	for _, i := range rows {
		row := &f.m.Rows[i]
		for k := range row.Entries {
			e := &row.Entries[k]
			if e.Dropped || e.Dominated || e.Invalid || e.unvalued || e.Config.GPUs <= 0 || e.Config.GPUs > f.typeIdle(e.Config.Type) {
				continue
			}
			gain := e.Value - row.Unallocated
			if f.m.Sense == ilp.Minimize {
				gain = -gain
			}
			if !(gain > 0) || math.IsInf(gain, 0) {
				continue
			}
			out = append(out, fillCandidate{row: i, entry: k, gpus: e.Config.GPUs, gain: gain})
		}
	}
	slices.SortFunc(out, func(a, b fillCandidate) int {
		if c := cmp.Compare(b.gain/float64(b.gpus), a.gain/float64(a.gpus)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.gain, a.gain); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.entry, b.entry))
	})
	return out
}

// limitsHold reports whether job i on entry e (using uses, its exact GPUs
// per pool) keeps the reservation of its type and the quotas covering it.
func (f *filler) limitsHold(i int, e *matrixEntry, uses []ilp.Option) bool {
	t := e.Config.Type
	if r := f.m.Reserved[t]; r > 0 && f.typeUse[t]+e.Config.GPUs > f.m.TypeCapacity(t)-r {
		return false
	}
	for _, q := range f.quotasOf(i) {
		if f.qUse[q]+quotaUse(&f.m.Quotas[q], uses) > f.m.Quotas[q].Limit {
			return false
		}
	}
	return true
}

// take records job i's new GPUs gs on entry e.
func (f *filler) take(i int, e *matrixEntry, uses []ilp.Option, gs []GPU) {
	if f.m.Reserved[e.Config.Type] > 0 {
		f.typeUse[e.Config.Type] += len(gs)
	}
	for _, q := range f.quotasOf(i) {
		f.qUse[q] += quotaUse(&f.m.Quotas[q], uses)
	}
}

// keep takes exactly the GPUs cur (a preempted job's current GPUs, n of
// them) when they are all idle, and returns them ordered by node then
// index; false, taking nothing, otherwise.
func (f *filler) keep(cur []GPU, n int) ([]GPU, bool) {
	if len(cur) != n || n == 0 {
		return nil, false
	}
	for _, g := range cur {
		k, ok := f.nodeIdx[g.Node]
		if !ok || f.idle[k] <= 0 || g.Index < 0 || g.Index >= f.snap.Nodes[k].GPUs || !f.freeOn(k)[g.Index] {
			return nil, false
		}
	}
	gs := slices.Clone(cur)
	slices.SortFunc(gs, func(a, b GPU) int {
		return cmp.Or(cmp.Compare(f.nodeIdx[a.Node], f.nodeIdx[b.Node]), cmp.Compare(a.Index, b.Index))
	})
	if len(slices.Compact(slices.Clone(gs))) != len(gs) {
		return nil, false // the same GPU twice
	}
	for _, g := range gs {
		k := f.nodeIdx[g.Node]
		f.freeOn(k)[g.Index] = false
		f.takeIdle(k, 1)
	}
	return gs, true
}

// fillPart is a number of GPUs on one node.
type fillPart struct{ node, gpus int }

// place finds idle GPUs for configuration c with its shape, takes them and
// returns them ordered by node (snapshot order) then index; false, taking
// nothing, when the idle GPUs cannot hold that shape.
func (f *filler) place(c configset.Config) ([]GPU, bool) {
	var plan []fillPart
	if c.Spanning() {
		for _, p := range c.Parts() {
			got, ok := f.placePart(c.Type, p.NodeGPUs, p.Nodes, p.GPUs, p.NodeGPUs)
			if !ok {
				return nil, false
			}
			plan = append(plan, got...)
		}
	} else {
		r := c.NodeGPUs
		if r == 0 {
			if k, ok := f.typeOf[c.Type]; ok {
				r = f.types[k].largest
			}
		}
		got, ok := f.placePart(c.Type, c.NodeGPUs, c.Nodes, c.GPUs, r)
		if !ok {
			return nil, false
		}
		plan = got
	}
	return f.takeParts(plan, c.GPUs), true
}

// takeParts takes the GPUs of plan (g in all) and returns them ordered by
// node (snapshot order) then index.
func (f *filler) takeParts(plan []fillPart, g int) []GPU {
	slices.SortFunc(plan, func(a, b fillPart) int { return cmp.Compare(a.node, b.node) })
	if len(f.gpuBuf) < g {
		f.gpuBuf = make([]GPU, max(g, fillChunk))
	}
	gs := f.gpuBuf[:0:g]
	f.gpuBuf = f.gpuBuf[g:]
	for _, p := range plan {
		gs = f.takeGPUs(gs, p)
	}
	return gs
}

// placePart chooses nodes for g GPUs on n nodes (0: placement.Shape's count)
// of r GPUs each in pool (typ, size), largest part first, best fit on
// distinct nodes; false when they do not fit the idle GPUs.
func (f *filler) placePart(typ string, size, n, g, r int) ([]fillPart, bool) {
	parts := fillShape(g, n, r)
	if parts == nil {
		return nil, false
	}
	key := fillPoolKey{typ, size}
	if parts[0] > f.maxIdle(key) {
		return nil, false // no node of the pool holds the largest part
	}
	nodes := f.pools[key]
	// The parts chosen go to f.parts, reused by the next call: place
	// consumes or copies them first.
	out := f.parts[:0]
	for _, need := range parts { // largest first
		at := f.bestFit(nodes, need)
		for at < len(nodes) && slices.ContainsFunc(out, func(p fillPart) bool { return p.node == nodes[at] }) {
			at++ // distinct nodes
		}
		if at == len(nodes) {
			return nil, false
		}
		out = append(out, fillPart{node: nodes[at], gpus: need})
	}
	f.parts = out[:0]
	return out, true
}

// maxIdle returns the most idle GPUs of one node of the pool.
func (f *filler) maxIdle(key fillPoolKey) int {
	ns := f.pools[key]
	if len(ns) == 0 {
		return 0
	}
	return f.idle[ns[len(ns)-1]]
}

// bestFit returns the position in the pool's list (sorted by idle GPUs,
// then node order) of the first node with at least need idle GPUs.
func (f *filler) bestFit(ns []int, need int) int {
	lo, _ := slices.BinarySearchFunc(ns, need, func(k, need int) int { return cmp.Compare(f.idle[k], need) })
	return lo
}

// position returns node k's position in the pool's list.
func (f *filler) position(ns []int, k int) int {
	at, _ := slices.BinarySearchFunc(ns, k, func(a, k int) int {
		return cmp.Or(cmp.Compare(f.idle[a], f.idle[k]), cmp.Compare(a, k))
	})
	return at
}

// typeIdle returns the idle GPUs of type t.
func (f *filler) typeIdle(t string) int {
	if k, ok := f.typeOf[t]; ok {
		return f.types[k].gpus
	}
	return 0
}

// takeIdle lowers node k's idle GPUs by n, keeping its pools' lists sorted.
func (f *filler) takeIdle(k, n int) {
	nd := &f.snap.Nodes[k]
	keys := [2]fillPoolKey{{nd.Type, nd.GPUs}, {nd.Type, 0}}
	for _, key := range keys {
		ns := f.pools[key]
		if at := f.position(ns, k); at < len(ns) && ns[at] == k {
			f.pools[key] = slices.Delete(ns, at, at+1)
		}
	}
	f.idle[k] -= n
	f.types[f.typeAt[k]].gpus -= n
	if f.idle[k] <= 0 {
		return
	}
	for _, key := range keys {
		ns := f.pools[key]
		f.pools[key] = slices.Insert(ns, f.position(ns, k), k)
	}
}

// fillShape returns the per-node GPU counts of g GPUs on n nodes of r GPUs
// each, largest first, as placement shapes a request (placement.Shape, or
// an even split over n nodes when n differs from its node count); nil when
// no such shape exists.
func fillShape(g, n, r int) []int {
	s := placement.Shape(g, r)
	if s == nil || n <= 0 || n == len(s) {
		return s
	}
	if n > g || ceilDiv(g, n) > r {
		return nil
	}
	out := make([]int, n)
	for k := range out {
		out[k] = g / n
		if k < g%n {
			out[k]++
		}
	}
	return out
}

// takeGPUs appends p.gpus free GPUs of node p.node (lowest indices first)
// to gs and marks them held.
func (f *filler) takeGPUs(gs []GPU, p fillPart) []GPU {
	n := &f.snap.Nodes[p.node]
	free := f.freeOn(p.node)
	for x, left := 0, p.gpus; x < len(free) && left > 0; x++ {
		if free[x] {
			free[x] = false
			gs = append(gs, GPU{Node: n.ID, Index: x})
			left--
		}
	}
	f.takeIdle(p.node, p.gpus)
	return gs
}

// freeOn returns node k's GPUs, true where free (built when first asked
// for a node with idle GPUs).
func (f *filler) freeOn(k int) []bool {
	free, ok := f.free[k]
	if !ok {
		n := f.snap.Nodes[k].GPUs
		if len(f.freeBuf) < n {
			f.freeBuf = make([]bool, max(n, fillChunk))
		}
		free, f.freeBuf = f.freeBuf[:n:n], f.freeBuf[n:]
		for x := range free {
			free[x] = true
		}
		if f.gpus != nil {
			for x, o := range f.gpus.slots(k) {
				free[x] = o == 0
			}
		}
		for _, x := range f.held[k] {
			if x >= 0 && x < len(free) {
				free[x] = false
			}
		}
		f.free[k] = free
	}
	return free
}

// fillBudget is the time the fill step may take: until placement's end on
// the round's clock (D + S/2, see Scheduler.Round), none once it has
// passed, no limit (−1) for a round without a deadline.
func fillBudget(clk *roundClock) time.Duration {
	if clk == nil || clk.placeEnd.IsZero() {
		return -1
	}
	return max(clk.placeEnd.Sub(clk.now()), 0)
}

// planObjective is the objective of the layout as placed: each job that
// gets GPUs at its entry's Value, the others at Unallocated.
func planObjective(m *goodputMatrix, sol solution, lay *layout) float64 {
	var s float64
	for i := range m.Rows {
		if c := lay.choice(i, sol); c >= 0 && lay.GPUs[i] != nil {
			s += m.Rows[i].Entries[c].Value
		} else {
			s += m.Rows[i].Unallocated
		}
	}
	return s
}

// relaxedPlanBound is a bound on the objective of every placeable plan,
// the filled plan included: the bound of the uncharged relaxation (the
// allocation problem with every configuration counting its GPUs, not its
// charge, against its pool), solved under ctx when solve is true, with the
// objective of that solve when it is proven optimal (else NaN); the
// capacity-free bound (every job at its best entry or waiting, pinned jobs
// at their pin) when solve is false or the solve fails.
//
// The fill's shaped entries that span pools (shaped.go) are left out of
// that solve, which would otherwise enumerate their branches (sia/span.go)
// in the little time the bound gets: each such job's best gain from one
// over waiting is added instead (valid: a plan that uses them is worth at
// most as much more than the same plan with those jobs waiting, which the
// solve bounds).
func relaxedPlanBound(ctx context.Context, m *goodputMatrix, o *Options, solve bool) (bound, optimum float64) {
	if solve {
		u := uncharged(m)
		add := dropShapedSpans(u)
		if sol, ok := solveUncharged(ctx, u, o); ok {
			optimum = math.NaN()
			if sol.Status == StatusOptimal {
				optimum = sol.Objective + add
			}
			return sol.Bound + add, optimum
		}
	}
	var s float64
	for i := range m.Rows {
		row := &m.Rows[i]
		if row.Pin >= 0 {
			s += row.Entries[row.Pin].Value
			continue
		}
		b := row.Unallocated
		for k := range row.Entries {
			if e := &row.Entries[k]; !e.Dropped && !e.Dominated && better(e.Value, b, m.Sense) {
				b = e.Value
			}
		}
		s += b
	}
	return s, math.NaN()
}

// dropShapedSpans marks u's shaped entries that span pools Dropped and
// returns the sum over their rows of the best change one of them makes to
// the objective over the row's waiting (≥ 0 when maximising, ≤ 0 when
// minimising; 0 without such entries).
func dropShapedSpans(u *goodputMatrix) float64 {
	add := 0.0
	for i := range u.Rows {
		row, gain := &u.Rows[i], 0.0
		for k := range row.Entries {
			e := &row.Entries[k]
			if !e.Shaped || !e.Config.Spanning() || e.Dropped {
				continue
			}
			e.Dropped = true
			if d := e.Value - row.Unallocated; better(d, gain, u.Sense) {
				gain = d
			}
		}
		add += gain
	}
	return add
}

// solveUncharged solves u, a matrix whose entries are charged their GPUs
// (uncharged).
func solveUncharged(ctx context.Context, u *goodputMatrix, o *Options) (solution, bool) {
	sol, err := solve(ctx, u, o)
	if err != nil || math.IsNaN(sol.Bound) {
		return solution{}, false
	}
	return sol, true
}

// uncharged returns a copy of m whose entries are charged their GPUs.
func uncharged(m *goodputMatrix) *goodputMatrix {
	u := *m
	u.Rows = slices.Clone(m.Rows)
	for i := range u.Rows {
		u.Rows[i].Entries = slices.Clone(m.Rows[i].Entries)
		for k := range u.Rows[i].Entries {
			u.Rows[i].Entries[k].Charge = u.Rows[i].Entries[k].Config.GPUs
		}
	}
	return &u
}

// fillPlan runs the fill step on a placed layout and, when it started
// jobs, returns the plan's objective and bound (±Inf for a partial matrix,
// which bounds nothing) and whether the plan is proven optimal (see
// Plan.Status). solveTime is how long the round's
// solve took: the uncharged relaxation gets at most that long (and at
// least 5 ms), and never more than half the time left to the deadline less
// the solver's allowance past its own (ilp.Slack), so that it ends before
// D; with less than a millisecond for it, the bound is the capacity-free
// one.
func fillPlan(ctx context.Context, clk *roundClock, snap *Snapshot, m *goodputMatrix, sol solution, lay *layout, o *Options, solveTime time.Duration) fillOutcome {
	budget := fillBudget(clk)
	if errors.Is(ctx.Err(), context.Canceled) {
		budget = 0 // a cancelled round is out of time; one past D fills until D + S/2
	}
	filled := fillIdle(snap, m, sol, lay, budget)
	if len(filled) == 0 {
		return fillOutcome{}
	}
	out := fillOutcome{Filled: filled, Objective: planObjective(m, sol, lay)}
	if m.Partial {
		// a truncated matrix bounds nothing (see solve): no solve for it
		out.Bound = unknownBound(m.Sense)
		return out
	}
	limit := max(solveTime, 5*time.Millisecond)
	solveOK := true
	if clk != nil && !clk.deadline.IsZero() {
		left := clk.deadline.Sub(clk.now()) / 2
		limit = min(limit, left-ilp.Slack(left))
		solveOK = limit > time.Millisecond
	}
	bctx, cancel := context.WithTimeout(ctx, max(limit, 0))
	defer cancel()
	var optimum float64
	out.Bound, optimum = relaxedPlanBound(bctx, m, o, solveOK && ctx.Err() == nil)
	tol := 1e-9 * math.Max(1, math.Abs(out.Objective))
	if better(out.Objective, out.Bound, m.Sense) {
		out.Bound = out.Objective // within the solver's tolerance
	}
	// The relaxation holds every placeable plan: a plan as good as its
	// proven optimum is optimal among them.
	out.Optimal = !math.IsNaN(optimum) && (!better(optimum, out.Objective, m.Sense) || math.Abs(optimum-out.Objective) <= tol)
	return out
}

// reasonSolution is the solution the reasons of a plan are given: the
// solver's, with the jobs the fill step started on their entries (so that
// the GPUs and quotas they take count as used).
func (l *layout) reasonSolution(sol solution) solution {
	if len(l.fill.Filled) == 0 || l.Choice == nil {
		return sol
	}
	out := sol
	out.Choice = l.Choice
	return out
}
