package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrInvalidInput is wrapped by every error Place returns for bad caller data
// (use errors.Is). The concrete error is an *InputError (use errors.As).
var ErrInvalidInput = errors.New("placement: invalid input")

// InputError describes bad input to Place. Job, Node and Type name the
// offending entity when known.
type InputError struct {
	Job    string // job ID, if the error concerns a request
	Node   string // node ID, if the error concerns a node or a GPU
	Type   string // GPU type, if the error concerns a type
	Field  string // offending field, e.g. "GPUs", "Current", "ID"
	Reason string
}

// Error implements error.
func (e *InputError) Error() string {
	s := "placement: invalid input:"
	if e.Job != "" {
		s += fmt.Sprintf(" job %q", e.Job)
	}
	if e.Node != "" {
		s += fmt.Sprintf(" node %q", e.Node)
	}
	if e.Type != "" {
		s += fmt.Sprintf(" type %q", e.Type)
	}
	if e.Field != "" {
		s += " " + e.Field
	}
	return s + ": " + e.Reason
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() []error { return []error{ErrInvalidInput} }

// MaxNodeGPUs is the largest GPU count of one node that Place accepts.
const MaxNodeGPUs = 4096

// MaxShapeParts bounds the number of per-node parts Shape returns, so that a
// huge GPU count cannot make it allocate without bound.
const MaxShapeParts = 1 << 24

// Node is a physical machine with GPUs GPUs (indexed 0 … GPUs−1) of one type.
type Node struct {
	ID   string
	Type string
	GPUs int
}

// GPU names one GPU: the node's ID and the GPU's index on that node.
type GPU struct {
	Node  string
	Index int
}

// String formats g as node/index.
func (g GPU) String() string { return fmt.Sprintf("%s/%d", g.Node, g.Index) }

// Request asks for GPUs GPUs of type Type for a job. Current lists the GPUs
// the job runs on now (empty for a job that is not running). GPUs = 0 means
// the job gets no GPUs this round (its current GPUs are released); Type is
// then ignored.
type Request struct {
	Job     string
	Type    string
	GPUs    int
	Current []GPU
	// NodeGPUs, when > 0, restricts the job to the nodes of Type with
	// exactly NodeGPUs GPUs (a pool, see package configset) and shapes it
	// on them. 0 means any node of Type, shaped by the type's largest node
	// (the same when all nodes of the type have one size).
	NodeGPUs int
	// Nodes, when > 0, is the number of nodes the job must span: the
	// node count its goodput was predicted for. A job keeps its current
	// GPUs only if they span that many nodes; when Nodes differs from the
	// number of parts of Shape, the job is split as evenly as possible
	// over Nodes nodes. 0 means the node count of Shape.
	Nodes int
	// Parts, when non-empty, spreads the job over the nodes of several
	// sizes of its type (a spanning configuration, see package configset):
	// part k takes Parts[k].GPUs GPUs on Parts[k].Nodes nodes with
	// Parts[k].NodeGPUs GPUs each, shaped as NodeGPUs and Nodes shape a
	// request. The parts' GPUs must sum to GPUs, their node sizes must be
	// distinct, NodeGPUs must be 0 and Nodes 0 or the parts' node count. The
	// job keeps its current
	// GPUs on a part's nodes when they have that part's shape there.
	Parts []Part
	// Pinned marks a job that must not be moved (non-preemptible, or in a
	// checkpoint-restore): when it keeps its type and count it is never
	// evicted. A pinned job whose type or count changes is placed like any
	// other job.
	Pinned bool
}

// Result is the outcome of Place. All job lists are sorted by job ID.
type Result struct {
	// Placements gives the GPUs of every placed job, ordered by node (in
	// the order of the nodes passed to Place), then by index.
	Placements map[string][]GPU
	// Evicted lists the jobs that kept their type and count, and so would
	// have kept their GPUs, but were moved off them to resolve
	// fragmentation (rule c). An evicted job is re-placed when possible
	// (and then also listed in Migrated), else listed in Unplaced.
	Evicted []string
	// Migrated lists the placed jobs that ran before and now run on a
	// different GPU type, or on the same type and count but other GPUs.
	// A job whose count changed on the same type (a resize) is not listed.
	Migrated []string
	// Unplaced lists the requests with GPUs > 0 that could not be placed
	// without breaking rules (a) and (b). This does not happen when the
	// requests of each pool (the nodes of one type and size, see NodeGPUs)
	// are configurations of package configset whose charges fit the pool's
	// capacity — unless pinned jobs, which are never moved, fragment the
	// nodes. Whenever the requests of a pool can be placed by their shapes
	// (with pinned jobs on their GPUs), they are: an exact search backs up
	// the heuristics on small pools (see Place).
	Unplaced []string
	// Cut reports that PlaceContext's ctx ended before placement was done:
	// from then on it made no evictions and no re-packing, and placed the
	// requests left on free GPUs only (or left them in Unplaced).
	Cut bool
}

// Shape returns the per-node parts of a request for g GPUs on nodes of r GPUs
// each, largest first: the node counts the request is placed with.
//
//   - g ≤ r: one part (rule a: a job no larger than a node stays on one node).
//   - otherwise ⌊g/r⌋ whole nodes (rule b) and the remainder g mod r, if any,
//     on one more node: 16 on 8-GPU nodes → [8 8], 18 on 6-GPU nodes →
//     [6 6 6], and for a rigid count that is not a configuration, 12 on 8-GPU
//     nodes → [8 4], 6 on 4-GPU nodes → [4 2].
//
// It returns nil for g ≤ 0 or r ≤ 0, and when the shape would have more
// than MaxShapeParts parts (no cluster Place accepts needs that many).
func Shape(g, r int) []int {
	parts, ok := appendShape(nil, g, r)
	if !ok {
		return nil
	}
	return parts
}

// appendShape appends Shape(g, r) to dst; false where Shape is nil.
func appendShape(dst []int, g, r int) ([]int, bool) {
	if g <= 0 || r <= 0 {
		return dst, false
	}
	if g <= r {
		return append(dst, g), true
	}
	if g/r > MaxShapeParts || (g/r == MaxShapeParts && g%r > 0) {
		return dst, false
	}
	dst = slices.Grow(dst, g/r+1)
	for i := 0; i < g/r; i++ {
		dst = append(dst, r)
	}
	if g%r > 0 {
		dst = append(dst, g%r)
	}
	return dst, true
}

// shapeOn is the shape of g GPUs over exactly n nodes of r GPUs: Shape(g, r)
// when n is 0 or its part count, else g split as evenly as possible over n
// nodes, largest first (8 over 2 nodes of 8 → [4 4]); nil when n nodes of r
// GPUs cannot hold g GPUs with at least one on each.
func shapeOn(g, n, r int) []int {
	parts, ok := appendShapeOn(nil, g, n, r)
	if !ok {
		return nil
	}
	return parts
}

// appendShapeOn appends shapeOn(g, n, r) to dst; false where it is nil.
func appendShapeOn(dst []int, g, n, r int) ([]int, bool) {
	start := len(dst)
	dst, ok := appendShape(dst, g, r)
	if !ok || n <= 0 || len(dst)-start == n {
		return dst, ok
	}
	dst = dst[:start]
	if n > g || g/n > r || (g/n == r && g%n > 0) || n > MaxShapeParts {
		return dst, false
	}
	for i := 0; i < n; i++ {
		part := g / n
		if i < g%n {
			part++
		}
		dst = append(dst, part)
	}
	return dst, true
}

// Place maps each request onto concrete GPUs.
//
// Rules (design §6, paper §3.1):
//   - A request is placed within its pool: the nodes of its Type with
//     NodeGPUs GPUs each (all nodes of the type when NodeGPUs is 0).
//   - A job that keeps its type, GPU count, pool and (when Nodes is set) node
//     count keeps exactly the GPUs it has.
//   - Every other job is placed by its shape (Shape; an even split when
//     Nodes asks for another node count): a single-node job goes to the node
//     with the fewest free GPUs that still fit it (best fit; ties to the
//     earlier node in nodes), and multi-node parts likewise to distinct
//     nodes, so whole-node parts take whole free nodes. Parts are placed
//     largest first, then by most GPUs, then by job ID; the smaller
//     remainder part of a rigid count (the 4 of 12 on 8-GPU nodes) is queued
//     by its own size. Within a node a part of a power-of-two size takes an
//     aligned block when one is free.
//   - When no node can take a part (fragmentation), jobs that kept their GPUs
//     are evicted from the node where that costs fewest jobs, then fewest
//     GPUs (single-node jobs before multi-node ones), and re-placed
//     afterwards like new jobs (rule c). Pinned jobs are never evicted.
//   - If a pool still has unplaced jobs, it is re-packed from scratch:
//     pinned jobs on their GPUs, the others largest first, each preferring
//     its current GPUs; that packing is used if it places more jobs. For
//     configurations of package configset (a divisible chain of sizes per
//     node, whole nodes beyond) this packing always succeeds when the
//     pool's capacity holds and no pinned job fragments it.
//   - If jobs remain unplaced, an exact search (bounded to exactBudget
//     steps, which covers small pools completely) looks for a packing of
//     all of the pool's jobs by their shapes around the pinned jobs, each
//     job preferring the nodes of its current GPUs and re-taking its own
//     GPUs there.
//
// Errors (wrapping ErrInvalidInput, as *InputError) for nodes with an empty
// or duplicate ID, an empty type or GPUs outside [1, MaxNodeGPUs]; requests
// with an empty or duplicate job ID, negative GPUs, a type no node has, a
// NodeGPUs no node of the type has, a Nodes count the GPUs cannot span, more
// GPUs than the type or pool has (alone or together with its other
// requests); current GPUs on an unknown node, with an index out of range, or
// claimed twice. The result never gives one GPU to two jobs and never
// exceeds a node. Same input → same output; the order of requests does not
// matter.
func Place(nodes []Node, reqs []Request) (Result, error) {
	return PlaceContext(context.Background(), nodes, reqs)
}

// PlaceContext is Place under ctx, for a caller with a deadline: its work
// is linear in the requests and nodes until ctx ends (it looks every
// stopCheckItems requests); from then on it makes no evictions and no
// re-packing, places the requests left on free GPUs only, best fit, or
// leaves them in Unplaced, and sets Result.Cut. Kept requests (same type,
// count and shape as their current GPUs) take their GPUs before anything
// else, so a ctx ended from the start moves no job: every kept request
// keeps its GPUs. The result keeps Place's rules (no GPU given twice, no
// node exceeded, pinned jobs on their GPUs); only which requests are placed
// depends on when ctx ends. Input errors are checked in full first.
func PlaceContext(ctx context.Context, nodes []Node, reqs []Request) (Result, error) {
	res, err := placeSlots(ctx, nodes, reqs, nil)
	if err != nil {
		return Result{}, err
	}
	return namedResult(nodes, reqs, res), nil
}

// stopCheckItems is how many queued requests pass between two looks at
// PlaceContext's ctx.
const stopCheckItems = 16

// stopped reports whether ctx has ended (looked at every stopCheckItems
// calls; once true it stays true).
func (p *problem) stopped() bool {
	if p.cut || p.ctx == nil {
		return p.cut
	}
	if p.checks++; p.checks%stopCheckItems == 1 && p.ctx.Err() != nil {
		p.cut = true
	}
	return p.cut
}

// run places every type and returns the result by job ID (requests
// without parts, see newProblem); evict false disables rule (c)'s
// incremental evictions (tests use it to exercise the re-pack).
func (p *problem) run(evict bool) Result {
	reqs := make([]Request, len(p.jobs))
	for j := range p.jobs {
		reqs[j] = *p.jobs[j].req
	}
	return namedResult(p.nodesAsGiven(), reqs, p.place(evict))
}

// nodesAsGiven returns the nodes of the problem.
func (p *problem) nodesAsGiven() []Node {
	nodes := make([]Node, len(p.nodes))
	for n := range p.nodes {
		nodes[n] = Node{ID: p.nodes[n].id, Type: p.nodes[n].typ, GPUs: p.nodes[n].gpus}
	}
	return nodes
}

// place places every type; evict false disables rule (c)'s incremental
// evictions.
func (p *problem) place(evict bool) SlotResult {
	p.evict = evict
	// Pinned jobs that may use every node of a type with nodes of several
	// sizes (pools of size 0, placed last) hold their GPUs from the start:
	// the pools of one size, placed before them, must not take those.
	for _, ti := range p.types {
		if ti.mixed < 0 {
			continue
		}
		for _, j := range p.poolJobs[ti.mixed] {
			if jb := &p.jobs[j]; jb.kept && jb.req.Pinned {
				p.assignAll(j, jb.cur)
				jb.placed = true
			}
		}
	}
	for pl := range p.pools {
		p.placeType(pl)
	}
	res := p.result()
	res.Cut = p.cut
	return res
}

// item is a unit of work in the placement queue: phase 0 places a job's
// equal leading parts (its whole nodes, or its only part); phase 1 places the
// smaller remainder part of a rigid count (12 on 8-GPU nodes: 8, then 4),
// queued by its own size so that it does not take room that larger parts of
// other jobs need.
type item struct {
	job   int
	phase int
}

// size is the part size an item is queued by.
func (p *problem) size(it item) int {
	jb := &p.jobs[it.job]
	if it.phase == 1 {
		return jb.shape[len(jb.shape)-1]
	}
	return jb.parts[0]
}

// less orders the queue: largest part first, then most GPUs, then kept jobs
// (they re-take their own GPUs in a re-pack), then job ID, then phase.
func (p *problem) less(a, b item) int {
	ja, jb := &p.jobs[a.job], &p.jobs[b.job]
	if c := cmp.Compare(p.size(b), p.size(a)); c != 0 {
		return c
	}
	if c := cmp.Compare(jb.req.GPUs, ja.req.GPUs); c != 0 {
		return c
	}
	if ja.kept != jb.kept {
		if ja.kept {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(ja.req.Job, jb.req.Job); c != 0 {
		return c
	}
	return cmp.Compare(a.phase, b.phase)
}

// head splits parts into the leading run of equal parts and the remainder.
func head(parts []int) ([]int, []int) {
	k := 1
	for k < len(parts) && parts[k] == parts[0] {
		k++
	}
	return parts[:k], parts[k:]
}

// runQueue places the jobs (phase-0 items) of pool pk in queue order. With
// evict, kept jobs may be evicted and are re-queued; with repack, kept jobs
// first try to take their current GPUs. It returns the number of jobs left
// unplaced.
func (p *problem) runQueue(pk int, jobs []int, evict, repack bool) int {
	queue := make([]item, 0, len(jobs))
	for _, j := range jobs {
		queue = append(queue, item{job: j})
	}
	slices.SortFunc(queue, p.less)
	push := func(it item) {
		k, _ := slices.BinarySearchFunc(queue, it, p.less)
		queue = slices.Insert(queue, k, it)
	}
	left := 0
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		j := it.job
		jb := &p.jobs[j]
		if it.phase == 0 && repack && p.takeCurrent(j) {
			continue
		}
		var victims []int
		ok := false
		if it.phase == 0 {
			hd, rest := head(jb.parts)
			if victims, ok = p.placeParts(j, pk, hd, evict && !p.stopped()); ok {
				jb.shape = jb.parts
				if len(rest) > 0 {
					push(item{job: j, phase: 1})
				} else {
					jb.placed = true
				}
			}
		} else {
			_, rest := head(jb.shape)
			if victims, ok = p.placeParts(j, pk, rest, evict && !p.stopped()); ok {
				jb.placed = true
			} else {
				p.release(j) // give up the leading parts too
			}
		}
		if !ok {
			left++
			continue
		}
		for _, v := range victims {
			push(item{job: v})
		}
	}
	return left
}

// placeType places every request of pool pk.
func (p *problem) placeType(pk int) {
	jobs := p.poolJobs[pk]
	var queue []int
	// Kept jobs take their GPUs first (pinned jobs of a mixed pool hold
	// them already, see run). A kept job of a mixed pool whose GPUs a pool
	// of one size took is moved (evicted) instead of given them twice.
	for _, j := range jobs {
		jb := &p.jobs[j]
		switch {
		case jb.kept && jb.placed:
		case jb.kept && p.curFree(j):
			p.assignAll(j, jb.cur)
			jb.placed = true
		case jb.kept:
			jb.evicted = true
			queue = append(queue, j)
		default:
			queue = append(queue, j)
		}
	}
	if p.runQueue(pk, queue, p.evict, false) == 0 || p.stopped() {
		return
	}
	unplaced := 0
	for _, j := range jobs {
		if !p.jobs[j].placed {
			unplaced++
		}
	}
	unplaced = p.repack(pk, jobs, unplaced, func(rest []int) int { return p.runQueue(pk, rest, false, true) })
	if unplaced > 0 && !p.stopped() {
		p.repack(pk, jobs, unplaced, func(rest []int) int { return p.exact(pk, rest) })
	}
}

// repack re-places all jobs of pool pk from scratch: pinned jobs take their
// current GPUs, then pack places the others and returns how many it left
// unplaced. The result is kept if it places more jobs. It returns the number
// of unplaced jobs afterwards.
func (p *problem) repack(pk int, jobs []int, unplaced int, pack func(rest []int) int) int {
	type saved struct {
		gpus            []int
		shape           []int
		placed, evicted bool
	}
	backup := make([]saved, len(jobs))
	for k, j := range jobs {
		backup[k] = saved{slices.Clone(p.jobs[j].gpus), p.jobs[j].shape, p.jobs[j].placed, p.jobs[j].evicted}
		p.release(j)
	}
	// pinned jobs first: they always get their GPUs back
	var rest []int
	for _, j := range jobs {
		if !p.jobs[j].req.Pinned || !p.takeCurrent(j) {
			rest = append(rest, j)
		}
	}
	left := pack(rest)
	if left < unplaced {
		for _, j := range jobs {
			jb := &p.jobs[j]
			jb.evicted = jb.kept && !slices.Equal(sortedCopy(jb.gpus), jb.cur)
		}
		return left
	}
	for _, j := range jobs {
		p.release(j)
	}
	for k, j := range jobs {
		for _, g := range backup[k].gpus {
			p.assign(j, g)
		}
		p.jobs[j].shape = backup[k].shape
		p.jobs[j].placed = backup[k].placed
		p.jobs[j].evicted = backup[k].evicted
	}
	return unplaced
}

// exactBudget bounds the work of one exact packing: the node visits of its
// search (about a millisecond), so that a large pool costs no more than a
// small one.
const exactBudget = 1 << 17

// exact places the jobs of pool pk (none of them placed, the pool's other
// GPUs fixed) by an exhaustive search over which node takes each part, every
// job by its shape with its parts on distinct nodes; a job's parts try the
// nodes of its current GPUs first, then best fit; nodes with the same free
// count are tried once per part. It places all jobs and returns 0 when the
// search finds a packing within exactBudget node visits, else it places nothing and
// returns len(jobs). Within a node, a job re-takes its own current GPUs where
// they are free.
func (p *problem) exact(pk int, jobs []int) int {
	if len(jobs) == 0 {
		return 0
	}
	ex := p.newExactSearch(pk, jobs)
	if !ex.search(0) {
		return len(jobs)
	}
	ex.assign()
	return 0
}

// exactSearch is the state of one exact packing: the pool's nodes (local
// positions k) and their free GPUs, the jobs in search order and their
// parts, and the node chosen for each part so far.
type exactSearch struct {
	p     *problem
	nodes []int       // local position -> node
	local []int32     // node -> local position, or -1 (nil until needed)
	free  []int       // per local node
	order []int       // the jobs, largest part first, then most GPUs, then ID
	parts []exactPart // the jobs' parts in order
	home  [][]bool    // per job (position in order): local nodes holding its current GPUs
	at    []int       // chosen local node per part
	steps int         // node visits so far
}

// exactPart is a part of a job (its position in the search order) of size
// GPUs; first is the index of the job's first part.
type exactPart struct{ job, size, first int }

// newExactSearch sets up the search for the jobs of pool pk.
func (p *problem) newExactSearch(pk int, jobs []int) *exactSearch {
	ex := &exactSearch{p: p, nodes: p.pnodes[pk], order: slices.Clone(jobs)}
	ex.free = make([]int, len(ex.nodes))
	ex.local = make([]int32, len(p.nodes))
	for n := range ex.local {
		ex.local[n] = -1
	}
	for k, n := range ex.nodes {
		ex.free[k] = p.free[n]
		ex.local[n] = int32(k)
	}
	slices.SortFunc(ex.order, func(a, b int) int {
		ja, jb := &p.jobs[a], &p.jobs[b]
		if c := cmp.Compare(jb.parts[0], ja.parts[0]); c != 0 {
			return c
		}
		if c := cmp.Compare(jb.req.GPUs, ja.req.GPUs); c != 0 {
			return c
		}
		return cmp.Compare(ja.req.Job, jb.req.Job)
	})
	ex.home = make([][]bool, len(ex.order))
	for o, j := range ex.order {
		first := len(ex.parts)
		for _, sz := range p.jobs[j].parts {
			ex.parts = append(ex.parts, exactPart{o, sz, first})
		}
		ex.home[o] = make([]bool, len(ex.nodes))
		for _, g := range p.jobs[j].cur {
			if k := ex.local[p.gpuNode[g]]; k >= 0 {
				ex.home[o][k] = true
			}
		}
	}
	ex.at = make([]int, len(ex.parts))
	return ex
}

// search places parts i… and reports whether all of them found nodes;
// it gives up (false) past exactBudget node visits or when ctx ends.
func (ex *exactSearch) search(i int) bool {
	if i == len(ex.parts) {
		return true
	}
	if ex.steps += len(ex.nodes); ex.steps > exactBudget || i%8 == 0 && ex.p.stopped() {
		ex.steps = exactBudget + 1 // out of budget, or ctx ended: give up
		return false
	}
	pt := ex.parts[i]
	// the job's own nodes first, then the rest by fewest free GPUs
	for k := range ex.nodes {
		if ex.home[pt.job][k] && ex.fits(i, k) && ex.try(i, k) {
			return true
		}
	}
	cands := ex.candidates(i)
	for c, k := range cands {
		if c > 0 && ex.free[cands[c-1]] == ex.free[k] {
			continue // same free count: the same subproblem
		}
		if ex.try(i, k) {
			return true
		}
		if ex.steps > exactBudget {
			return false
		}
	}
	return false
}

// fits reports whether part i fits local node k, which holds none of its
// job's earlier parts.
func (ex *exactSearch) fits(i, k int) bool {
	pt := ex.parts[i]
	if ex.free[k] < pt.size {
		return false
	}
	for q := pt.first; q < i; q++ {
		if ex.at[q] == k {
			return false
		}
	}
	return true
}

// candidates returns the local nodes part i fits, other than its job's
// own, by fewest free GPUs (ties in node order).
func (ex *exactSearch) candidates(i int) []int {
	job := ex.parts[i].job
	cands := make([]int, 0, len(ex.nodes))
	for k := range ex.nodes {
		if !ex.home[job][k] && ex.fits(i, k) {
			cands = append(cands, k)
		}
	}
	slices.SortStableFunc(cands, func(a, b int) int { return cmp.Compare(ex.free[a], ex.free[b]) })
	return cands
}

// try puts part i on local node k and searches the parts after it.
func (ex *exactSearch) try(i, k int) bool {
	size := ex.parts[i].size
	ex.free[k] -= size
	ex.at[i] = k
	ok := ex.search(i + 1)
	ex.free[k] += size
	return ok
}

// assign gives the jobs GPUs on the nodes found: first every job's own
// free GPUs on its chosen nodes, then the lowest (or aligned) free ones.
func (ex *exactSearch) assign() {
	p := ex.p
	need := make([]int, len(ex.parts)) // per part: GPUs still to take on its node
	for i, pt := range ex.parts {
		need[i] = pt.size
	}
	partOn := func(o, k int) int { // the part of job o on local node k, or -1
		for i := ex.firstPart(o); i < len(ex.parts) && ex.parts[i].job == o; i++ {
			if ex.at[i] == k {
				return i
			}
		}
		return -1
	}
	for o, j := range ex.order {
		for _, g := range p.jobs[j].cur {
			n, idx := p.nodeOf(g)
			if k := ex.local[n]; k >= 0 && p.nodes[n].owner[idx] == -1 {
				if i := partOn(o, int(k)); i >= 0 && need[i] > 0 {
					p.assign(j, g)
					need[i]--
				}
			}
		}
	}
	for o, j := range ex.order {
		for _, i := range ex.partsByNode(o) {
			if need[i] > 0 {
				n := ex.nodes[ex.at[i]]
				for _, idx := range p.pickGPUs(n, need[i]) {
					p.assign(j, p.gid(n, idx))
				}
			}
		}
		p.jobs[j].shape, p.jobs[j].placed = p.jobs[j].parts, true
	}
}

// firstPart returns the index of the first part of job o (position in the
// search order).
func (ex *exactSearch) firstPart(o int) int {
	i, _ := slices.BinarySearchFunc(ex.parts, o, func(pt exactPart, o int) int { return cmp.Compare(pt.job, o) })
	return i
}

// partsByNode returns the parts of job o by their local node.
func (ex *exactSearch) partsByNode(o int) []int {
	var out []int
	for i := ex.firstPart(o); i < len(ex.parts) && ex.parts[i].job == o; i++ {
		out = append(out, i)
	}
	slices.SortFunc(out, func(a, b int) int { return cmp.Compare(ex.at[a], ex.at[b]) })
	return out
}

func sortedCopy(s []int) []int {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// curFree reports whether every current GPU of job j is unassigned.
func (p *problem) curFree(j int) bool {
	for _, g := range p.jobs[j].cur {
		n, i := p.nodeOf(g)
		if p.nodes[n].owner[i] != -1 {
			return false
		}
	}
	return true
}

// takeCurrent gives a kept job its current GPUs if they are all free.
func (p *problem) takeCurrent(j int) bool {
	jb := &p.jobs[j]
	if !jb.kept || !p.curFree(j) {
		return false
	}
	p.assignAll(j, jb.cur)
	jb.placed = true
	return true
}

// placeParts places parts of job j on distinct nodes of type t, none holding
// GPUs the job already has, best fit, evicting kept jobs when allowed and
// needed. It returns the evicted jobs. On failure nothing changes.
func (p *problem) placeParts(j int, pk int, parts []int, evict bool) ([]int, bool) {
	used := p.nodesOfJob(j)
	pp := partPlan{p: p}
	for _, size := range parts {
		n := p.bestFit(pk, size, used)
		if n < 0 && evict {
			n = pp.evictFor(pk, size, used, j)
		}
		if n < 0 {
			pp.undo()
			return nil, false
		}
		used.add(n)
		pp.reserve(n, size)
	}
	pp.assign(j)
	return pp.victims(), true
}

// nodesOfJob returns the set of the nodes holding job j's GPUs (its other
// parts).
func (p *problem) nodesOfJob(j int) usedSet {
	p.stamp++
	used := usedSet{p.used, p.stamp}
	for _, g := range p.jobs[j].gpus {
		n, _ := p.nodeOf(g)
		used.add(n)
	}
	return used
}

// partPlan is placeParts' work on one job: the nodes chosen for its parts
// so far (their GPUs reserved, so that later parts see the right free
// counts) and the jobs evicted for them, with the GPUs to give back should
// a later part fail.
type partPlan struct {
	p       *problem
	chosen  []partChoice
	evicted []evictedJob
}

type partChoice struct{ node, size int }

type evictedJob struct {
	job  int
	gpus []int
}

// evictFor evicts the cheapest kept jobs that make room for size GPUs on
// a node of pool pk not in used (cheapestEviction) and returns the node,
// or -1.
func (pp *partPlan) evictFor(pk, size int, used usedSet, self int) int {
	p := pp.p
	n, vs := p.cheapestEviction(pk, size, used, self)
	for _, v := range vs {
		pp.evicted = append(pp.evicted, evictedJob{v, slices.Clone(p.jobs[v].gpus)})
		p.release(v)
		p.jobs[v].evicted = true
	}
	return n
}

// reserve holds size free GPUs of node n for a part.
func (pp *partPlan) reserve(n, size int) {
	pp.chosen = append(pp.chosen, partChoice{n, size})
	pp.p.addFree(n, -size)
}

// undo gives back the reserved GPUs and the evicted jobs' GPUs, last
// eviction first.
func (pp *partPlan) undo() {
	p := pp.p
	for _, c := range pp.chosen {
		p.addFree(c.node, c.size)
	}
	for k := len(pp.evicted) - 1; k >= 0; k-- {
		e := pp.evicted[k]
		for _, g := range e.gpus {
			p.assign(e.job, g)
		}
		p.jobs[e.job].placed = true
		p.jobs[e.job].evicted = false
	}
}

// assign gives job j the GPUs reserved on the chosen nodes.
func (pp *partPlan) assign(j int) {
	p := pp.p
	for _, c := range pp.chosen {
		p.addFree(c.node, c.size)
		for _, i := range p.pickGPUs(c.node, c.size) {
			p.assign(j, p.gid(c.node, i))
		}
	}
}

// victims returns the jobs evicted, in eviction order.
func (pp *partPlan) victims() []int {
	var out []int
	for _, e := range pp.evicted {
		out = append(out, e.job)
	}
	return out
}

// cheapestEviction finds the node of type t (not in used) on which evicting
// kept jobs frees room for size GPUs at least cost: fewest jobs, then fewest
// GPUs, single-node victims preferred over multi-node ones; ties go to the
// earliest node. It returns -1 if no node works.
func (p *problem) cheapestEviction(pk int, size int, used usedSet, self int) (int, []int) {
	var sc victimScratch // reused node by node
	for _, allowMulti := range []bool{false, true} {
		bestNode, bestCount, bestCost := -1, 0, 0
		var bestSet []int
		for _, n := range p.pnodes[pk] {
			if used.has(n) || p.nodes[n].gpus < size {
				continue
			}
			cands := p.nodeVictims(n, self, allowMulti, &sc)
			set, count, cost, ok := minVictims(cands, size-p.free[n])
			if !ok {
				continue
			}
			if bestNode < 0 || count < bestCount || (count == bestCount && cost < bestCost) {
				bestNode, bestCount, bestCost, bestSet = n, count, cost, set
			}
		}
		if bestNode >= 0 {
			return bestNode, bestSet
		}
	}
	return -1, nil
}

// victimScratch holds nodeVictims' lists, reused node by node.
type victimScratch struct{ onNode, cands []victim }

// nodeVictims returns the jobs that may be evicted from node n for job
// self, each with the GPUs it frees there: kept, not evicted yet, not
// pinned, and (unless allowMulti) holding GPUs on n only.
func (p *problem) nodeVictims(n, self int, allowMulti bool, sc *victimScratch) []victim {
	// the jobs on the node and their GPUs there (a node has at most
	// MaxNodeGPUs GPUs: a slice beats a map)
	sc.onNode = sc.onNode[:0]
owners:
	for _, o := range p.nodes[n].owner {
		if o < 0 {
			continue
		}
		for k := range sc.onNode {
			if sc.onNode[k].job == o {
				sc.onNode[k].freed++
				continue owners
			}
		}
		sc.onNode = append(sc.onNode, victim{job: o, freed: 1})
	}
	sc.cands = sc.cands[:0]
	for _, v := range sc.onNode {
		jb := &p.jobs[v.job]
		if v.job == self || !jb.kept || jb.evicted || jb.req.Pinned {
			continue
		}
		if !allowMulti && v.freed != len(jb.gpus) {
			continue
		}
		sc.cands = append(sc.cands, victim{job: v.job, freed: v.freed, cost: len(jb.gpus), id: jb.req.Job})
	}
	return sc.cands
}

type victim struct {
	job, freed, cost int
	id               string
}

// minVictims chooses a subset of cands whose freed GPUs sum to at least need,
// with the fewest members, then the least cost; ties are broken towards
// smaller, then earlier-named jobs. Exact (dynamic programming over count and
// freed GPUs capped at need).
func minVictims(cands []victim, need int) ([]int, int, int, bool) {
	if need <= 0 {
		return nil, 0, 0, true
	}
	slices.SortFunc(cands, func(a, b victim) int {
		if c := cmp.Compare(a.cost, b.cost); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	total := 0
	for _, c := range cands {
		total += c.freed
	}
	if total < need {
		return nil, 0, 0, false // even every candidate frees too little
	}
	t := newVictimTable(cands, need)
	for c := 1; c <= len(cands); c++ {
		if cost := t.get(0, c, need); cost != victimInf {
			return t.choose(c), c, cost, true
		}
	}
	return nil, 0, 0, false
}

const victimInf = int(^uint(0) >> 1)

// victimTable is minVictims' dynamic programme: at (i, c, f), the least
// cost using candidates i… choosing c more of them to free at least f more
// GPUs (victimInf: impossible). Built backwards so that the choice prefers
// early (small) candidates.
type victimTable struct {
	cands []victim
	need  int
	dp    []int // flat, at (i*(m+1)+c)*(need+1)+f
}

func newVictimTable(cands []victim, need int) *victimTable {
	m := len(cands)
	t := &victimTable{cands: cands, need: need, dp: make([]int, (m+1)*(m+1)*(need+1))}
	for k := range t.dp {
		t.dp[k] = victimInf
	}
	for c := 0; c <= m; c++ {
		t.set(m, c, 0, 0)
	}
	for i := m - 1; i >= 0; i-- {
		for c := 0; c <= m; c++ {
			for f := 0; f <= need; f++ {
				best := t.get(i+1, c, f)
				if v := t.taking(i, c, f); v < best {
					best = v
				}
				t.set(i, c, f, best)
			}
		}
	}
	return t
}

func (t *victimTable) at(i, c, f int) int  { return (i*(len(t.cands)+1)+c)*(t.need+1) + f }
func (t *victimTable) get(i, c, f int) int { return t.dp[t.at(i, c, f)] }
func (t *victimTable) set(i, c, f, v int)  { t.dp[t.at(i, c, f)] = v }

// taking returns the least cost at (i, c, f) when candidate i is taken.
func (t *victimTable) taking(i, c, f int) int {
	if c == 0 {
		return victimInf
	}
	v := t.get(i+1, c-1, max(f-t.cands[i].freed, 0))
	if v == victimInf {
		return victimInf
	}
	return v + t.cands[i].cost
}

// choose reconstructs the c victims of a least cost at (0, c, need),
// taking each candidate when taking it is optimal.
func (t *victimTable) choose(c int) []int {
	set := make([]int, 0, c)
	f := t.need
	for i := 0; i < len(t.cands) && c > 0; i++ {
		if v := t.taking(i, c, f); v != victimInf && v == t.get(i, c, f) {
			set = append(set, t.cands[i].job)
			f, c = max(f-t.cands[i].freed, 0), c-1
		}
	}
	return set
}

// pickGPUs chooses size free GPU indices on node n (in an array reused by
// the next call): for a power-of-two size,
// the first free block that starts at a multiple of size; else (or when there
// is no such block) the lowest free indices.
func (p *problem) pickGPUs(n, size int) []int {
	nd := &p.nodes[n]
	out := p.picked[:0] // the caller reads it before the next pick
	defer func() { p.picked = out }()
	if size&(size-1) == 0 {
		for off := 0; off+size <= nd.gpus; off += size {
			if !slices.ContainsFunc(nd.owner[off:off+size], func(o int) bool { return o != -1 }) {
				for i := off; i < off+size; i++ {
					out = append(out, i)
				}
				return out
			}
		}
	}
	for i, o := range nd.owner {
		if o == -1 && len(out) < size {
			out = append(out, i)
		}
	}
	return out
}

// result lists the placement by job (request position): every placed
// job's GPUs (one backing array, each job's slice capped at its length)
// and the evicted, migrated and unplaced jobs, sorted by job ID.
func (p *problem) result() SlotResult {
	total := 0
	for j := range p.jobs {
		if jb := &p.jobs[j]; jb.req.GPUs > 0 && jb.placed {
			total += len(jb.gpus)
		}
	}
	res := SlotResult{Placements: make([][]Slot, len(p.jobs))}
	backing := make([]Slot, 0, total)
	for j := range p.jobs {
		jb := &p.jobs[j]
		if jb.req.GPUs == 0 {
			continue
		}
		if jb.evicted {
			res.Evicted = append(res.Evicted, j)
		}
		if !jb.placed {
			res.Unplaced = append(res.Unplaced, j)
			continue
		}
		if !slices.IsSorted(jb.gpus) {
			jb.gpus = sortedCopy(jb.gpus)
		}
		start := len(backing)
		for _, g := range jb.gpus {
			n, i := p.nodeOf(g)
			backing = append(backing, Slot{Node: int32(n), Index: int32(i)})
		}
		res.Placements[j] = backing[start:len(backing):len(backing)]
		if len(jb.cur) > 0 && (!jb.typeOK || (len(jb.cur) == jb.req.GPUs && !slices.Equal(jb.gpus, jb.cur))) {
			res.Migrated = append(res.Migrated, j)
		}
	}
	byJob := func(a, b int) int { return cmp.Compare(p.jobs[a].req.Job, p.jobs[b].req.Job) }
	slices.SortFunc(res.Evicted, byJob)
	slices.SortFunc(res.Unplaced, byJob)
	slices.SortFunc(res.Migrated, byJob)
	return res
}
