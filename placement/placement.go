package placement

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
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

// Unwrap makes errors.Is(err, ErrInvalidInput) hold.
func (e *InputError) Unwrap() error { return ErrInvalidInput }

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
	// without breaking rules (a) and (b). This does not happen when each
	// type has nodes of one size, every request has a configuration shape
	// of that type (see package configset) and the requests of a type fit
	// its capacity and, for node sizes that are not powers of two, its
	// configset size limits — unless pinned jobs, which are never moved,
	// fragment the nodes.
	Unplaced []string
}

// Shape returns the per-node parts of a request for g GPUs on nodes of r GPUs
// each, largest first: the node counts the request is placed with.
//
//   - g ≤ r: one part (rule a: a job no larger than a node stays on one node).
//   - g > r and g a multiple of v, the largest power of two ≤ r (the largest
//     virtual node): g/v parts of v on distinct nodes. For power-of-two r these
//     are whole nodes (rule b); for r = 6 a 12-GPU configuration (3,12) takes
//     the 4-GPU virtual node of three nodes.
//   - otherwise (a rigid count that is no configuration shape): ⌊g/r⌋ whole
//     nodes and the remainder g mod r on one more node, e.g. 12 on 8-GPU
//     nodes → [8 4], 6 on 4-GPU nodes → [4 2].
//
// When r is not a power of two and the parts of v cannot be placed (for
// example 12 GPUs on two 6-GPU nodes need three 4-GPU virtual nodes), Place
// falls back to the whole-node split of the last case ([6 6]).
//
// It returns nil for g ≤ 0 or r ≤ 0, and when the shape would have more
// than MaxShapeParts parts (no cluster Place accepts needs that many).
func Shape(g, r int) []int {
	if g <= 0 || r <= 0 {
		return nil
	}
	if g <= r {
		return []int{g}
	}
	v := 1 << (bits.Len(uint(r)) - 1)
	if (g%v == 0 && g/v > MaxShapeParts) || (g%v != 0 && g/r >= MaxShapeParts) {
		return nil
	}
	var parts []int
	if g%v == 0 {
		for i := 0; i < g/v; i++ {
			parts = append(parts, v)
		}
		return parts
	}
	for i := 0; i < g/r; i++ {
		parts = append(parts, r)
	}
	if g%r > 0 {
		parts = append(parts, g%r)
	}
	return parts
}

// altShape is the whole-node split ⌊g/r⌋·r + remainder, or nil when it equals
// Shape(g, r).
func altShape(g, r int) []int {
	if g <= r || r <= 0 || r&(r-1) == 0 {
		return nil
	}
	v := 1 << (bits.Len(uint(r)) - 1)
	if g%v != 0 {
		return nil
	}
	var parts []int
	for i := 0; i < g/r; i++ {
		parts = append(parts, r)
	}
	if g%r > 0 {
		parts = append(parts, g%r)
	}
	return parts
}

// virtualNodes is the binary decomposition of r, largest first (6 → 4 2).
func virtualNodes(r int) []int {
	var out []int
	for b := bits.Len(uint(r)) - 1; b >= 0; b-- {
		if r&(1<<b) != 0 {
			out = append(out, 1<<b)
		}
	}
	return out
}

// Place maps each request onto concrete GPUs.
//
// Rules (design §6, paper §3.1):
//   - A job that keeps its type and GPU count keeps exactly the GPUs it has.
//   - Every other job is placed by its Shape: a single-node job goes to the
//     node with the fewest free GPUs that still fit it (best fit; ties to the
//     earlier node in nodes), and multi-node parts likewise to distinct
//     nodes, so whole-node parts take whole free nodes. Parts are placed
//     largest first, then by most GPUs, then by job ID; the smaller
//     remainder part of a rigid count (the 4 of 12 on 8-GPU nodes) is queued
//     by its own size. Within a node a part takes an aligned block of a
//     virtual node when one is free (a 6-GPU node is virtual 4 + 2: GPUs 0–3
//     and 4–5).
//   - When no node can take a part (fragmentation), jobs that kept their GPUs
//     are evicted from the node where that costs fewest jobs, then fewest
//     GPUs (single-node jobs before multi-node ones), and re-placed
//     afterwards like new jobs (rule c). Pinned jobs are never evicted.
//   - If a type still has unplaced jobs, it is re-packed from scratch,
//     largest first, with each job preferring its current GPUs, and that
//     packing is used if it places more jobs; if jobs remain unplaced, once
//     more with jobs on nodes that are not a power of two preferring whole
//     nodes (see Shape).
//
// Errors (wrapping ErrInvalidInput, as *InputError) for nodes with an empty
// or duplicate ID, an empty type or GPUs outside [1, MaxNodeGPUs]; requests
// with an empty or duplicate job ID, negative GPUs, a type no node has, more
// GPUs than the type has (alone or together with the type's other requests);
// current GPUs on an unknown node, with an index out of range, or claimed
// twice. The result never gives one GPU to two jobs and never exceeds a node.
// Same input → same output; the order of requests does not matter.
func Place(nodes []Node, reqs []Request) (Result, error) {
	p, err := newProblem(nodes, reqs)
	if err != nil {
		return Result{}, err
	}
	return p.run(true), nil
}

// run places every type; evict false disables rule (c)'s incremental
// evictions (tests use it to exercise the re-pack).
func (p *problem) run(evict bool) Result {
	p.evict = evict
	for _, t := range p.types {
		p.placeType(t)
	}
	return p.result()
}

type nodeInfo struct {
	id    string
	typ   string
	gpus  int
	vn    []int // virtual node sizes, largest first
	owner []int // per GPU: job index or -1
	free  int
}

type jobInfo struct {
	req     Request
	parts   []int
	alt     []int // fallback parts (see altShape), nil if none
	shape   []int // the parts being placed (parts or alt)
	kept    bool  // keeps type and count: holds its current GPUs
	evicted bool  // was kept, then moved off its GPUs
	placed  bool  // has GPUs this round
	gpus    []int // global GPU ids assigned this round (see problem.gid)
	cur     []int // current GPUs as global ids
	typeOK  bool  // current GPUs all of the requested type
}

type problem struct {
	nodes  []nodeInfo
	byID   map[string]int
	types  []string         // in first-appearance order of nodes
	tnodes map[string][]int // type -> node indices
	jobs   []jobInfo
	base   []int // base[n] = global id of GPU 0 of node n
	evict  bool  // allow incremental evictions
	used   []int // per node: stamp of the job placement that uses it
	stamp  int
}

// usedSet marks the nodes one job's parts use: node n is in the set iff
// marks[n] == stamp.
type usedSet struct {
	marks []int
	stamp int
}

func (u usedSet) has(n int) bool { return u.marks[n] == u.stamp }
func (u usedSet) add(n int)      { u.marks[n] = u.stamp }

func (p *problem) gid(n, i int) int { return p.base[n] + i }

func (p *problem) nodeOf(g int) (int, int) {
	n := sort.Search(len(p.base), func(k int) bool { return p.base[k] > g }) - 1
	return n, g - p.base[n]
}

func newProblem(nodes []Node, reqs []Request) (*problem, error) {
	p := &problem{byID: make(map[string]int, len(nodes)), tnodes: map[string][]int{}}
	total := 0
	for i, n := range nodes {
		switch {
		case n.ID == "":
			return nil, &InputError{Type: n.Type, Field: "ID", Reason: fmt.Sprintf("node %d has an empty ID", i)}
		case n.Type == "":
			return nil, &InputError{Node: n.ID, Field: "Type", Reason: "empty GPU type"}
		case n.GPUs <= 0 || n.GPUs > MaxNodeGPUs:
			return nil, &InputError{Node: n.ID, Type: n.Type, Field: "GPUs", Reason: fmt.Sprintf("must be in [1, %d], got %d", MaxNodeGPUs, n.GPUs)}
		}
		if _, dup := p.byID[n.ID]; dup {
			return nil, &InputError{Node: n.ID, Field: "ID", Reason: "duplicate node ID"}
		}
		p.byID[n.ID] = i
		if _, ok := p.tnodes[n.Type]; !ok {
			p.types = append(p.types, n.Type)
		}
		p.tnodes[n.Type] = append(p.tnodes[n.Type], i)
		owner := make([]int, n.GPUs)
		for k := range owner {
			owner[k] = -1
		}
		p.nodes = append(p.nodes, nodeInfo{id: n.ID, typ: n.Type, gpus: n.GPUs, vn: virtualNodes(n.GPUs), owner: owner, free: n.GPUs})
		p.base = append(p.base, total)
		total += n.GPUs
	}
	p.used = make([]int, len(p.nodes))
	capacity := map[string]int{}
	maxNode := map[string]int{}
	for _, n := range p.nodes {
		capacity[n.typ] += n.gpus
		maxNode[n.typ] = max(maxNode[n.typ], n.gpus)
	}
	demand := map[string]int{}
	seenJob := make(map[string]bool, len(reqs))
	claimed := make([]int32, total) // job position in sorted + 1, 0 = free
	// Sort by job ID so that the output does not depend on the request order.
	sorted := slices.Clone(reqs)
	slices.SortFunc(sorted, func(a, b Request) int { return cmp.Compare(a.Job, b.Job) })
	for pos, r := range sorted {
		if r.Job == "" {
			return nil, &InputError{Type: r.Type, Field: "Job", Reason: fmt.Sprintf("request %d has an empty job ID", slices.IndexFunc(reqs, func(q Request) bool { return q.Job == "" }))}
		}
		if seenJob[r.Job] {
			return nil, &InputError{Job: r.Job, Field: "Job", Reason: "duplicate job"}
		}
		seenJob[r.Job] = true
		if r.GPUs < 0 {
			return nil, &InputError{Job: r.Job, Type: r.Type, Field: "GPUs", Reason: fmt.Sprintf("must be ≥ 0, got %d", r.GPUs)}
		}
		if r.GPUs > 0 {
			c, ok := capacity[r.Type]
			if !ok {
				return nil, &InputError{Job: r.Job, Type: r.Type, Field: "Type", Reason: "no node has this GPU type"}
			}
			if r.GPUs > c {
				return nil, &InputError{Job: r.Job, Type: r.Type, Field: "GPUs", Reason: fmt.Sprintf("requests %d GPUs, the type has %d", r.GPUs, c)}
			}
			demand[r.Type] += r.GPUs
		}
		j := jobInfo{req: r, typeOK: len(r.Current) > 0}
		for _, g := range r.Current {
			n, ok := p.byID[g.Node]
			if !ok {
				return nil, &InputError{Job: r.Job, Node: g.Node, Field: "Current", Reason: "unknown node"}
			}
			if g.Index < 0 || g.Index >= p.nodes[n].gpus {
				return nil, &InputError{Job: r.Job, Node: g.Node, Field: "Current",
					Reason: fmt.Sprintf("GPU index %d out of range [0,%d)", g.Index, p.nodes[n].gpus)}
			}
			id := p.gid(n, g.Index)
			if c := claimed[id]; c != 0 {
				who := "twice by this job"
				if other := sorted[c-1].Job; other != r.Job {
					who = fmt.Sprintf("also by job %q", other)
				}
				return nil, &InputError{Job: r.Job, Node: g.Node, Field: "Current", Reason: fmt.Sprintf("GPU %d claimed %s", g.Index, who)}
			}
			claimed[id] = int32(pos + 1)
			j.cur = append(j.cur, id)
			if p.nodes[n].typ != r.Type {
				j.typeOK = false
			}
		}
		slices.Sort(j.cur)
		if r.GPUs > 0 {
			j.parts = Shape(r.GPUs, maxNode[r.Type])
			j.alt = altShape(r.GPUs, maxNode[r.Type])
			j.kept = j.typeOK && len(j.cur) == r.GPUs
		}
		p.jobs = append(p.jobs, j)
	}
	for _, t := range p.types {
		if demand[t] > capacity[t] {
			return nil, &InputError{Type: t, Field: "GPUs", Reason: fmt.Sprintf("requests total %d GPUs, the type has %d", demand[t], capacity[t])}
		}
	}
	return p, nil
}

// assign gives GPU g to job j.
func (p *problem) assign(j, g int) {
	n, i := p.nodeOf(g)
	p.nodes[n].owner[i] = j
	p.nodes[n].free--
	p.jobs[j].gpus = append(p.jobs[j].gpus, g)
}

// release takes all GPUs from job j.
func (p *problem) release(j int) {
	for _, g := range p.jobs[j].gpus {
		n, i := p.nodeOf(g)
		p.nodes[n].owner[i] = -1
		p.nodes[n].free++
	}
	p.jobs[j].gpus = nil
	p.jobs[j].placed = false
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

// runQueue places the jobs (phase-0 items) in queue order. With evict,
// kept jobs may be evicted and are re-queued; with repack, kept jobs first
// try to take their current GPUs; with preferAlt, jobs try their fallback
// shape first. It returns the number of jobs left unplaced.
func (p *problem) runQueue(t string, jobs []int, evict, repack, preferAlt bool) int {
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
			shapes := [][]int{jb.parts, jb.alt}
			if preferAlt && jb.alt != nil {
				shapes[0], shapes[1] = shapes[1], shapes[0]
			}
			for _, sh := range shapes {
				if sh == nil {
					continue
				}
				hd, rest := head(sh)
				if victims, ok = p.placeParts(j, t, hd, evict); ok {
					jb.shape = sh
					if len(rest) > 0 {
						push(item{job: j, phase: 1})
					} else {
						jb.placed = true
					}
					break
				}
			}
		} else {
			_, rest := head(jb.shape)
			if victims, ok = p.placeParts(j, t, rest, evict); ok {
				jb.placed = true
			} else {
				// give up the leading parts; try the other shape whole
				p.release(j)
				for _, sh := range [][]int{jb.parts, jb.alt} {
					if sh != nil && !slices.Equal(sh, jb.shape) {
						if victims, ok = p.placeParts(j, t, sh, evict); ok {
							jb.shape, jb.placed = sh, true
						}
						break
					}
				}
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

// placeType places every request of type t.
func (p *problem) placeType(t string) {
	var jobs, queue []int
	for j := range p.jobs {
		if p.jobs[j].req.GPUs > 0 && p.jobs[j].req.Type == t {
			jobs = append(jobs, j)
		}
	}
	// Kept jobs take their GPUs first.
	for _, j := range jobs {
		if p.jobs[j].kept {
			for _, g := range p.jobs[j].cur {
				p.assign(j, g)
			}
			p.jobs[j].placed = true
		} else {
			queue = append(queue, j)
		}
	}
	if p.runQueue(t, queue, p.evict, false, false) == 0 {
		return
	}
	unplaced := 0
	for _, j := range jobs {
		if !p.jobs[j].placed {
			unplaced++
		}
	}
	unplaced = p.repack(t, jobs, unplaced, false)
	if unplaced > 0 {
		p.repack(t, jobs, unplaced, true)
	}
}

// repack re-places all jobs of type t from scratch, largest first, each
// preferring its current GPUs, and keeps the result if it places more jobs.
//
// With preferAlt, jobs with a fallback shape (see altShape) try it first. It
// returns the number of unplaced jobs afterwards.
func (p *problem) repack(t string, jobs []int, unplaced int, preferAlt bool) int {
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
	left := p.runQueue(t, rest, false, true, preferAlt)
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

func sortedCopy(s []int) []int {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// takeCurrent gives a kept job its current GPUs if they are all free.
func (p *problem) takeCurrent(j int) bool {
	jb := &p.jobs[j]
	if !jb.kept {
		return false
	}
	for _, g := range jb.cur {
		n, i := p.nodeOf(g)
		if p.nodes[n].owner[i] != -1 {
			return false
		}
	}
	for _, g := range jb.cur {
		p.assign(j, g)
	}
	jb.placed = true
	return true
}

// placeParts places parts of job j on distinct nodes of type t, none holding
// GPUs the job already has, best fit, evicting kept jobs when allowed and
// needed. It returns the evicted jobs. On failure nothing changes.
func (p *problem) placeParts(j int, t string, parts []int, evict bool) ([]int, bool) {
	p.stamp++
	used := usedSet{p.used, p.stamp}
	for _, g := range p.jobs[j].gpus { // nodes holding the job's other parts
		n, _ := p.nodeOf(g)
		used.add(n)
	}
	type choice struct{ node, size int }
	var chosen []choice
	var victims []int
	// Undo log for evictions made while trying this job.
	type undo struct {
		job  int
		gpus []int
	}
	var undos []undo
	rollback := func() {
		for k := len(undos) - 1; k >= 0; k-- {
			u := undos[k]
			for _, g := range u.gpus {
				p.assign(u.job, g)
			}
			p.jobs[u.job].placed = true
			p.jobs[u.job].evicted = false
		}
	}
	for _, size := range parts {
		n := p.bestFit(t, size, used)
		if n < 0 && evict {
			var vs []int
			n, vs = p.cheapestEviction(t, size, used, j)
			for _, v := range vs {
				undos = append(undos, undo{v, slices.Clone(p.jobs[v].gpus)})
				p.release(v)
				p.jobs[v].evicted = true
				victims = append(victims, v)
			}
		}
		if n < 0 {
			for _, c := range chosen {
				p.nodes[c.node].free += c.size
			}
			rollback()
			return nil, false
		}
		used.add(n)
		chosen = append(chosen, choice{n, size})
		// reserve now so later parts see the right free counts
		p.nodes[n].free -= size
	}
	for _, c := range chosen {
		p.nodes[c.node].free += c.size
		for _, i := range p.pickGPUs(c.node, c.size) {
			p.assign(j, p.gid(c.node, i))
		}
	}
	return victims, true
}

// bestFit returns the node of type t, not in used, with the fewest free GPUs
// that are at least size (ties: earliest node), or -1.
func (p *problem) bestFit(t string, size int, used usedSet) int {
	best := -1
	for _, n := range p.tnodes[t] {
		f := p.nodes[n].free
		if f < size || used.has(n) {
			continue
		}
		if best < 0 || f < p.nodes[best].free {
			best = n
			if f == size {
				break
			}
		}
	}
	return best
}

// cheapestEviction finds the node of type t (not in used) on which evicting
// kept jobs frees room for size GPUs at least cost: fewest jobs, then fewest
// GPUs, single-node victims preferred over multi-node ones; ties go to the
// earliest node. It returns -1 if no node works.
func (p *problem) cheapestEviction(t string, size int, used usedSet, self int) (int, []int) {
	for _, allowMulti := range []bool{false, true} {
		bestNode, bestCount, bestCost := -1, 0, 0
		var bestSet []int
		for _, n := range p.tnodes[t] {
			nd := &p.nodes[n]
			if used.has(n) || nd.gpus < size {
				continue
			}
			need := size - nd.free
			// candidate victims on this node with GPUs freed here
			onNode := map[int]int{}
			for _, o := range nd.owner {
				if o >= 0 {
					onNode[o]++
				}
			}
			var cands []victim
			for o, k := range onNode {
				jb := &p.jobs[o]
				if o == self || !jb.kept || jb.evicted || jb.req.Pinned {
					continue
				}
				if !allowMulti && k != len(jb.gpus) {
					continue
				}
				cands = append(cands, victim{job: o, freed: k, cost: len(jb.gpus), id: jb.req.Job})
			}
			set, count, cost, ok := minVictims(cands, need)
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
	m := len(cands)
	const inf = int(^uint(0) >> 1)
	// dp[i][c][f]: least cost using items i.. choosing c more items to free
	// at least f more GPUs. Built backwards so reconstruction prefers early
	// (small) items.
	dp := make([][][]int, m+1)
	for i := range dp {
		dp[i] = make([][]int, m+1)
		for c := range dp[i] {
			dp[i][c] = make([]int, need+1)
			for f := range dp[i][c] {
				dp[i][c][f] = inf
			}
		}
	}
	for c := 0; c <= m; c++ {
		dp[m][c][0] = 0
	}
	for i := m - 1; i >= 0; i-- {
		for c := 0; c <= m; c++ {
			for f := 0; f <= need; f++ {
				best := dp[i+1][c][f]
				if c > 0 {
					rest := max(f-cands[i].freed, 0)
					if v := dp[i+1][c-1][rest]; v != inf && v+cands[i].cost < best {
						best = v + cands[i].cost
					}
				}
				dp[i][c][f] = best
			}
		}
	}
	for c := 1; c <= m; c++ {
		if dp[0][c][need] == inf {
			continue
		}
		// reconstruct, preferring to take item i when it is optimal
		var set []int
		f, cc := need, c
		for i := 0; i < m && cc > 0; i++ {
			rest := max(f-cands[i].freed, 0)
			if v := dp[i+1][cc-1][rest]; v != inf && v+cands[i].cost == dp[i][cc][f] {
				set = append(set, cands[i].job)
				f, cc = rest, cc-1
			}
		}
		return set, c, dp[0][c][need], true
	}
	return nil, 0, 0, false
}

// pickGPUs chooses size free GPU indices on node n: an aligned block inside a
// virtual node when one is free (best-fit virtual node), else the lowest free
// indices.
func (p *problem) pickGPUs(n, size int) []int {
	nd := &p.nodes[n]
	if size&(size-1) == 0 {
		bestStart, bestFree := -1, 0
		start := 0
		for _, v := range nd.vn {
			if v >= size {
				vfree := 0
				for i := start; i < start+v; i++ {
					if nd.owner[i] == -1 {
						vfree++
					}
				}
				if vfree >= size && (bestStart < 0 || vfree < bestFree) {
					for off := start; off+size <= start+v; off += size {
						ok := true
						for i := off; i < off+size; i++ {
							if nd.owner[i] != -1 {
								ok = false
								break
							}
						}
						if ok {
							bestStart, bestFree = off, vfree
							break
						}
					}
				}
			}
			start += v
		}
		if bestStart >= 0 {
			out := make([]int, size)
			for i := range out {
				out[i] = bestStart + i
			}
			return out
		}
	}
	out := make([]int, 0, size)
	for i, o := range nd.owner {
		if o == -1 && len(out) < size {
			out = append(out, i)
		}
	}
	return out
}

func (p *problem) result() Result {
	res := Result{Placements: map[string][]GPU{}}
	for j := range p.jobs {
		jb := &p.jobs[j]
		if jb.req.GPUs == 0 {
			continue
		}
		if !jb.placed {
			res.Unplaced = append(res.Unplaced, jb.req.Job)
			if jb.evicted {
				res.Evicted = append(res.Evicted, jb.req.Job)
			}
			continue
		}
		gs := sortedCopy(jb.gpus)
		out := make([]GPU, len(gs))
		for k, g := range gs {
			n, i := p.nodeOf(g)
			out[k] = GPU{Node: p.nodes[n].id, Index: i}
		}
		res.Placements[jb.req.Job] = out
		if jb.evicted {
			res.Evicted = append(res.Evicted, jb.req.Job)
		}
		if len(jb.cur) > 0 && (!jb.typeOK || (len(jb.cur) == jb.req.GPUs && !slices.Equal(gs, jb.cur))) {
			res.Migrated = append(res.Migrated, jb.req.Job)
		}
	}
	return res
}
