package placement

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
)

// The placement problem: nodes, pools and requests indexed once as dense
// integers (node, pool and job indices, global GPU ids), so that the
// placement itself looks nothing up by name. Setting it up costs a few
// array writes per node, request and current GPU: a round in which most
// jobs keep their GPUs is cheap.

type nodeInfo struct {
	id    string
	typ   string
	gpus  int
	owner []int    // per GPU: job index or -1
	pool  int      // the pool of the node's type and size
	mixed int      // the pool of all nodes of its type (a type with several node sizes), or -1
	at    [2]int32 // its position among the nodes of pool and of mixed (see freeIndex)
}

// poolKey names the nodes a request may use: those of type typ with size
// GPUs each, or all nodes of the type when size is 0 (only for a type with
// nodes of several sizes; otherwise size is the one node size).
type poolKey struct {
	typ  string
	size int
}

// typeInfo is what the requests of one GPU type are checked against.
type typeInfo struct {
	name     string
	capacity int   // GPUs of the type
	maxNode  int   // its largest node
	sizes    []int // node sizes, in first-appearance order
	pools    []int // the pool of each size
	mixed    int   // the pool of all its nodes (several sizes), or -1
	demand   int   // GPUs the requests ask for
}

type jobInfo struct {
	req     *Request
	pool    int   // index in problem.pools
	parts   []int // the job's shape
	shape   []int // the parts being placed (parts once placement started)
	kept    bool  // keeps type, count (and pool and nodes): holds its current GPUs
	evicted bool  // was kept, then moved off its GPUs
	placed  bool  // has GPUs this round
	gpus    []int // global GPU ids assigned this round (see problem.gid)
	cur     []int // current GPUs as global ids, sorted
	typeOK  bool  // current GPUs all of the requested type
}

type problem struct {
	nodes    []nodeInfo
	byID     map[string]int // node ID -> index (PlaceContext: current GPUs named by node ID; nil for PlaceSlots)
	types    []typeInfo
	typeOf   map[string]int // type name -> index in types
	pools    []poolKey      // in first-appearance order of nodes; mixed-type (size 0) pools last
	pnodes   [][]int        // pool -> node indices
	poolCap  []int          // pool -> GPUs
	poolJobs [][]int        // pool -> the jobs (GPUs > 0) placed in it, in job order
	jobs     []jobInfo
	base     []int       // base[n] = global id of GPU 0 of node n
	free     []int       // per node: GPUs not assigned (or reserved by placeParts); change with addFree
	fidx     []freeIndex // per pool: its nodes by free count
	picked   []int       // pickGPUs' result
	slab     []int       // backs the GPU lists of the jobs placed (see gpuList)
	gpuNode  []int32     // global GPU id -> node
	evict    bool        // allow incremental evictions
	used     []int       // per node: stamp of the job placement that uses it
	stamp    int
	ctx      context.Context // PlaceContext's (nil: none)
	scratch  *scratch        // the arrays kept for reuse (nil: none)
	checks   int             // calls of stopped
	cut      bool            // ctx ended: no more evictions or re-packing
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
	n := int(p.gpuNode[g])
	return n, g - p.base[n]
}

// newProblem indexes the nodes and their pools, reads the requests (in job
// ID order, so that nothing depends on the order of reqs; their current
// GPUs named by node ID, without parts) and checks the demand on every type
// and pool.
func newProblem(nodes []Node, reqs []Request) (*problem, error) {
	p, err := indexProblem(nodes, true)
	if err != nil {
		return nil, err
	}
	if err := p.readRequests(reqs, p.slotsOf(reqs)); err != nil {
		return nil, err
	}
	if err := p.checkDemand(); err != nil {
		return nil, err
	}
	return p, nil
}

// indexProblem validates and indexes the nodes and their pools; named
// builds the map of node IDs that slotsOf reads current GPUs with.
func indexProblem(nodes []Node, named bool) (*problem, error) {
	return (&scratch{}).indexed(nodes, named)
}

// slotsOf returns the current GPUs of every request as slots (one backing
// array): a GPU on an unknown node gets node −1 and one whose index does
// not fit an int32 index −1, which reading the request reports (naming the
// GPU as given).
func (p *problem) slotsOf(reqs []Request) [][]Slot {
	total := 0
	for k := range reqs {
		total += len(reqs[k].Current)
	}
	backing := make([]Slot, 0, total)
	out := make([][]Slot, len(reqs))
	last, lastID := int32(-1), ""
	for k := range reqs {
		if len(reqs[k].Current) == 0 {
			continue
		}
		start := len(backing)
		for _, g := range reqs[k].Current {
			if last < 0 || g.Node != lastID {
				last, lastID = -1, g.Node
				if n, ok := p.byID[g.Node]; ok {
					last = int32(n)
				}
			}
			idx := int32(-1)
			if g.Index >= 0 && g.Index <= MaxNodeGPUs {
				idx = int32(g.Index)
			}
			backing = append(backing, Slot{Node: last, Index: idx})
		}
		out[k] = backing[start:len(backing):len(backing)]
	}
	return out
}

// checkNode validates node i.
func checkNode(i int, n *Node) error {
	switch {
	case n.ID == "":
		return &InputError{Type: n.Type, Field: "ID", Reason: fmt.Sprintf("node %d has an empty ID", i)}
	case n.Type == "":
		return &InputError{Node: n.ID, Field: "Type", Reason: "empty GPU type"}
	case n.GPUs <= 0 || n.GPUs > MaxNodeGPUs:
		return &InputError{Node: n.ID, Type: n.Type, Field: "GPUs", Reason: fmt.Sprintf("must be in [1, %d], got %d", MaxNodeGPUs, n.GPUs)}
	}
	return nil
}

// indexNodes validates the nodes and gives each its GPUs' global ids, its
// type and its pool of one size; named keeps a map of the node IDs (else a
// set finds duplicates).
func (p *problem) indexNodes(nodes []Node, named bool) error {
	total := 0
	for i := range nodes {
		if err := checkNode(i, &nodes[i]); err != nil {
			return err
		}
		total += nodes[i].GPUs
	}
	var ids idSet
	if named {
		p.byID = make(map[string]int, len(nodes))
	} else {
		ids = newIDSet(len(nodes), func(k int) string { return nodes[k].ID }, nil)
	}
	p.typeOf = map[string]int{}
	p.nodes = make([]nodeInfo, len(nodes))
	p.base = make([]int, len(nodes))
	p.used = make([]int, len(nodes))
	p.free = make([]int, len(nodes))
	p.gpuNode = make([]int32, total)
	owners := make([]int, total) // one backing array for the nodes' owner slices
	for k := range owners {
		owners[k] = -1
	}
	total = 0
	for i := range nodes {
		n := &nodes[i]
		if !p.addNode(&ids, i, n.ID) {
			return &InputError{Node: n.ID, Field: "ID", Reason: "duplicate node ID"}
		}
		p.nodes[i] = nodeInfo{id: n.ID, typ: n.Type, gpus: n.GPUs, owner: owners[total : total+n.GPUs : total+n.GPUs],
			pool: p.sizePool(n.Type, n.GPUs), mixed: -1}
		p.free[i] = n.GPUs
		p.base[i] = total
		for k := total; k < total+n.GPUs; k++ {
			p.gpuNode[k] = int32(i)
		}
		total += n.GPUs
	}
	return nil
}

// addNode records the ID of node i (in byID, or else in ids); false when
// another node has it.
func (p *problem) addNode(ids *idSet, i int, id string) bool {
	if p.byID == nil {
		return ids.add(i)
	}
	if _, dup := p.byID[id]; dup {
		return false
	}
	p.byID[id] = i
	return true
}

// sizePool returns the pool of the nodes of type typ with size GPUs,
// adding the type and the pool when first seen.
func (p *problem) sizePool(typ string, size int) int {
	t, ok := p.typeOf[typ]
	if !ok {
		t = len(p.types)
		p.typeOf[typ] = t
		p.types = append(p.types, typeInfo{name: typ, mixed: -1})
	}
	ti := &p.types[t]
	ti.capacity += size
	ti.maxNode = max(ti.maxNode, size)
	if k := slices.Index(ti.sizes, size); k >= 0 {
		return ti.pools[k]
	}
	ti.sizes = append(ti.sizes, size)
	ti.pools = append(ti.pools, len(p.pools))
	p.pools = append(p.pools, poolKey{typ, size})
	return len(p.pools) - 1
}

// indexPools lists every pool's nodes and capacity, and adds a pool of all
// nodes for each type with nodes of several sizes (after the pools of one
// size, in the types' order).
func (p *problem) indexPools() {
	for t := range p.types {
		if ti := &p.types[t]; len(ti.sizes) > 1 {
			ti.mixed = len(p.pools)
			p.pools = append(p.pools, poolKey{ti.name, 0})
		}
	}
	p.pnodes = make([][]int, len(p.pools))
	p.poolCap = make([]int, len(p.pools))
	for i := range p.nodes {
		nd := &p.nodes[i]
		nd.mixed = p.types[p.typeOf[nd.typ]].mixed
		for _, pl := range [2]int{nd.pool, nd.mixed} {
			if pl >= 0 {
				p.pnodes[pl] = append(p.pnodes[pl], i)
				p.poolCap[pl] += nd.gpus
			}
		}
	}
}

// readRequests validates the requests and records each one's pool, shape
// and current GPUs (cur[k] for request k); job j is request j. Nothing
// placement does depends on that order (its queues order jobs by ID, its
// lists are sorted), and an error is reported for the first bad request in
// job ID order.
func (p *problem) readRequests(reqs []Request, cur [][]Slot) error {
	if err := p.readInOrder(reqs, cur, nil); err != nil {
		for t := range p.types {
			p.types[t].demand = 0
		}
		perm := make([]int32, len(reqs))
		for k := range perm {
			perm[k] = int32(k)
		}
		slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(reqs[a].Job, reqs[b].Job) })
		if err := p.readInOrder(reqs, cur, perm); err != nil {
			return err
		}
		return err // not reached: the same requests in another order
	}
	if len(p.poolJobs) != len(p.pools) {
		p.poolJobs = make([][]int, len(p.pools))
	}
	for j := range p.jobs {
		if jb := &p.jobs[j]; jb.req.GPUs > 0 {
			p.poolJobs[jb.pool] = append(p.poolJobs[jb.pool], j)
		}
	}
	return nil
}

// readInOrder reads the requests in the order perm (nil: as given), job
// pos being request perm[pos]. With perm, a duplicate job ID is the one
// before it; without, a set of the IDs finds it.
func (p *problem) readInOrder(reqs []Request, cur [][]Slot, perm []int32) error {
	held := 0
	for k := range cur {
		held += len(cur[k])
	}
	// Current GPUs beyond the fleet's are claimed twice: an error.
	rd := requestReader{p: p, reqs: reqs, slots: cur, perm: perm, typ: -1}
	sc := p.scratch
	if sc == nil {
		sc = &scratch{}
	}
	rd.claimed = grown(sc.claimed, len(p.gpuNode))
	clear(rd.claimed)
	rd.cur = slices.Grow(sc.cur[:0], min(held, len(p.gpuNode)+1))
	rd.parts = sc.parts[:0]
	if perm == nil {
		rd.seen = newIDSet(len(reqs), func(k int) string { return reqs[k].Job }, sc.idSlots)
		sc.idSlots = rd.seen.slots
	}
	p.jobs = grown(p.jobs, len(reqs))
	defer func() { sc.claimed, sc.cur, sc.parts = rd.claimed, rd.cur, rd.parts }()
	for pos := range reqs {
		if err := rd.read(pos, &reqs[rd.at(pos)]); err != nil {
			return err
		}
	}
	return nil
}

// requestReader reads the requests one by one: claimed records which job
// (position + 1) holds each GPU, cur and parts back the jobs' slices.
type requestReader struct {
	p       *problem
	reqs    []Request
	slots   [][]Slot // per request: its current GPUs
	perm    []int32  // reading order (nil: as given)
	seen    idSet    // the job IDs read (without perm)
	claimed []int32
	cur     []int
	parts   []int
	typ     int // the type of the last request read, or -1
}

// at returns the request read at position pos.
func (rd *requestReader) at(pos int) int {
	if rd.perm == nil {
		return pos
	}
	return int(rd.perm[pos])
}

// read checks request r (job pos in ID order) and records its job.
func (rd *requestReader) read(pos int, r *Request) error {
	p := rd.p
	if err := rd.checkID(pos, r); err != nil {
		return err
	}
	j := &p.jobs[pos]
	*j = jobInfo{req: r, typeOK: len(rd.slots[rd.at(pos)]) > 0}
	if r.GPUs > 0 {
		t, err := rd.requestType(r)
		if err != nil {
			return err
		}
		if err := rd.shape(j, &p.types[t]); err != nil {
			return err
		}
	}
	if err := rd.current(pos, j, rd.slots[rd.at(pos)]); err != nil {
		return err
	}
	if r.GPUs > 0 {
		j.kept = j.typeOK && len(j.cur) == r.GPUs && p.inPool(j.cur, j.pool) && (r.Nodes == 0 || p.spans(j.cur) == r.Nodes)
	}
	return nil
}

// checkID checks the job ID of r (position pos in ID order: a duplicate is
// the one before it) and its GPU count.
func (rd *requestReader) checkID(pos int, r *Request) error {
	switch {
	case r.Job == "":
		return &InputError{Type: r.Type, Field: "Job", Reason: fmt.Sprintf("request %d has an empty job ID", slices.IndexFunc(rd.reqs, func(q Request) bool { return q.Job == "" }))}
	case rd.duplicate(pos, r.Job):
		return &InputError{Job: r.Job, Field: "Job", Reason: "duplicate job"}
	case r.GPUs < 0:
		return &InputError{Job: r.Job, Type: r.Type, Field: "GPUs", Reason: fmt.Sprintf("must be ≥ 0, got %d", r.GPUs)}
	}
	return nil
}

// duplicate reports whether job ID id, read at position pos, was read
// before.
func (rd *requestReader) duplicate(pos int, id string) bool {
	if rd.perm != nil {
		return pos > 0 && rd.reqs[rd.perm[pos-1]].Job == id
	}
	return !rd.seen.add(rd.at(pos))
}

// idSet is a set of IDs (the requests' job IDs, or the nodes') by open
// addressing: one hash and usually one string comparison per ID, no
// allocation per ID. Element k has ID key(k).
type idSet struct {
	key   func(k int) string
	seed  maphash.Seed
	slots []int32 // element + 1; 0: empty
	mask  uint64
}

// newIDSet returns an empty set for n elements, its table in buf when it
// is large enough.
func newIDSet(n int, key func(k int) string, buf []int32) idSet {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	slots := grown(buf, size)
	clear(slots)
	return idSet{key: key, seed: idSeed, slots: slots, mask: uint64(size - 1)}
}

// idSeed seeds the ID sets' hashes (per process: nothing depends on it).
var idSeed = maphash.MakeSeed()

// add adds the ID of element k; false when the set holds it already.
func (s *idSet) add(k int) bool {
	id := s.key(k)
	for h := maphash.String(s.seed, id) & s.mask; ; h = (h + 1) & s.mask {
		switch v := s.slots[h]; {
		case v == 0:
			s.slots[h] = int32(k + 1)
			return true
		case s.key(int(v-1)) == id:
			return false
		}
	}
}

// requestType returns the type of request r (GPUs > 0), checked to exist
// and to hold the request, with the request added to its demand.
func (rd *requestReader) requestType(r *Request) (int, error) {
	p := rd.p
	t := rd.typ
	if t < 0 || p.types[t].name != r.Type {
		var ok bool
		if t, ok = p.typeOf[r.Type]; !ok {
			return 0, &InputError{Job: r.Job, Type: r.Type, Field: "Type", Reason: "no node has this GPU type"}
		}
		rd.typ = t
	}
	ti := &p.types[t]
	if r.GPUs > ti.capacity {
		return 0, &InputError{Job: r.Job, Type: r.Type, Field: "GPUs", Reason: fmt.Sprintf("requests %d GPUs, the type has %d", r.GPUs, ti.capacity)}
	}
	ti.demand += r.GPUs
	return t, nil
}

// shape sets job j's pool and shape on type ti (see requestShape).
func (rd *requestReader) shape(j *jobInfo, ti *typeInfo) error {
	pool, size, err := requestPool(j.req, ti, rd.p.poolCap)
	if err != nil {
		return err
	}
	start := len(rd.parts)
	var ok bool
	if rd.parts, ok = appendShapeOn(rd.parts, j.req.GPUs, j.req.Nodes, size); !ok {
		r := j.req
		return &InputError{Job: r.Job, Type: r.Type, Field: "Nodes", Reason: fmt.Sprintf("%d GPUs cannot span %d nodes of %d GPUs", r.GPUs, r.Nodes, size)}
	}
	j.pool, j.parts = pool, rd.parts[start:len(rd.parts):len(rd.parts)]
	return nil
}

// requestPool returns the pool of request r on type ti and the node size
// it is shaped by.
func requestPool(r *Request, ti *typeInfo, poolCap []int) (pool, size int, err error) {
	switch {
	case r.NodeGPUs < 0:
		return 0, 0, &InputError{Job: r.Job, Type: r.Type, Field: "NodeGPUs", Reason: fmt.Sprintf("must be ≥ 0, got %d", r.NodeGPUs)}
	case r.NodeGPUs > 0 && !slices.Contains(ti.sizes, r.NodeGPUs):
		return 0, 0, &InputError{Job: r.Job, Type: r.Type, Field: "NodeGPUs", Reason: fmt.Sprintf("no node of the type has %d GPUs (sizes %v)", r.NodeGPUs, ti.sizes)}
	case r.Nodes < 0:
		return 0, 0, &InputError{Job: r.Job, Type: r.Type, Field: "Nodes", Reason: fmt.Sprintf("must be ≥ 0, got %d", r.Nodes)}
	}
	size = r.NodeGPUs
	switch {
	case size > 0:
		pool = ti.pools[slices.Index(ti.sizes, size)]
	case len(ti.sizes) == 1:
		size, pool = ti.maxNode, ti.pools[0]
	default:
		size, pool = ti.maxNode, ti.mixed
	}
	if r.GPUs > poolCap[pool] {
		return 0, 0, &InputError{Job: r.Job, Type: r.Type, Field: "GPUs", Reason: fmt.Sprintf("requests %d GPUs, the type's %d-GPU nodes have %d", r.GPUs, size, poolCap[pool])}
	}
	return pool, size, nil
}

// current checks and records the current GPUs slots of job j (position
// pos): known nodes, indices in range, no GPU claimed twice.
func (rd *requestReader) current(pos int, j *jobInfo, slots []Slot) error {
	if len(slots) == 0 {
		return nil
	}
	r := j.req
	p := rd.p
	start := len(rd.cur)
	for k, s := range slots {
		n, err := rd.nodeOf(r, k, s)
		if err != nil {
			return err
		}
		id := p.gid(n, int(s.Index))
		if c := rd.claimed[id]; c != 0 {
			who := "twice by this job"
			if other := rd.reqs[rd.at(int(c-1))].Job; other != r.Job {
				who = fmt.Sprintf("also by job %q", other)
			}
			node, idx := rd.gpuName(r, k, s)
			return &InputError{Job: r.Job, Node: node, Field: "Current", Reason: fmt.Sprintf("GPU %d claimed %s", idx, who)}
		}
		rd.claimed[id] = int32(pos + 1)
		rd.cur = append(rd.cur, id)
		if p.nodes[n].typ != r.Type {
			j.typeOK = false
		}
	}
	j.cur = rd.cur[start:len(rd.cur):len(rd.cur)]
	slices.Sort(j.cur)
	return nil
}

// nodeOf returns the node of current GPU k (slot s) of request r, checked
// to exist and to have the index.
func (rd *requestReader) nodeOf(r *Request, k int, s Slot) (int, error) {
	n := int(s.Node)
	if n < 0 || n >= len(rd.p.nodes) {
		if k < len(r.Current) {
			return 0, &InputError{Job: r.Job, Node: r.Current[k].Node, Field: "Current", Reason: "unknown node"}
		}
		return 0, &InputError{Job: r.Job, Field: "Current", Reason: fmt.Sprintf("GPU %d: node position %d out of range [0,%d)", k, n, len(rd.p.nodes))}
	}
	if s.Index < 0 || int(s.Index) >= rd.p.nodes[n].gpus {
		node, idx := rd.gpuName(r, k, s)
		return 0, &InputError{Job: r.Job, Node: node, Field: "Current",
			Reason: fmt.Sprintf("GPU index %d out of range [0,%d)", idx, rd.p.nodes[n].gpus)}
	}
	return n, nil
}

// gpuName returns the node ID and index of current GPU k (slot s, on a
// known node) of request r, as the caller gave them.
func (rd *requestReader) gpuName(r *Request, k int, s Slot) (string, int) {
	if k < len(r.Current) {
		return r.Current[k].Node, r.Current[k].Index
	}
	return rd.p.nodes[s.Node].id, int(s.Index)
}

// checkDemand checks that the requests of every type and pool fit it.
func (p *problem) checkDemand() error {
	for _, t := range slices.Sorted(maps.Keys(p.typeOf)) {
		if ti := &p.types[p.typeOf[t]]; ti.demand > ti.capacity {
			return &InputError{Type: t, Field: "GPUs", Reason: fmt.Sprintf("requests total %d GPUs, the type has %d", ti.demand, ti.capacity)}
		}
	}
	demand := make([]int, len(p.pools))
	for j := range p.jobs {
		if jb := &p.jobs[j]; jb.req.GPUs > 0 {
			demand[jb.pool] += jb.req.GPUs
		}
	}
	for pl, pk := range p.pools {
		if demand[pl] > p.poolCap[pl] {
			return &InputError{Type: pk.typ, Field: "GPUs", Reason: fmt.Sprintf("requests total %d GPUs on the %d-GPU nodes, which have %d", demand[pl], pk.size, p.poolCap[pl])}
		}
	}
	return nil
}

// inPool reports whether all GPUs gs lie on nodes of pool pl.
func (p *problem) inPool(gs []int, pl int) bool {
	for _, g := range gs {
		if nd := &p.nodes[p.gpuNode[g]]; nd.pool != pl && nd.mixed != pl {
			return false
		}
	}
	return true
}

// spans returns the number of distinct nodes of the GPUs gs (sorted).
func (p *problem) spans(gs []int) int {
	k, last := 0, int32(-1)
	for _, g := range gs {
		if n := p.gpuNode[g]; n != last {
			k, last = k+1, n
		}
	}
	return k
}

// assign gives GPU g to job j.
func (p *problem) assign(j, g int) {
	n, i := p.nodeOf(g)
	p.nodes[n].owner[i] = j
	p.addFree(n, -1)
	jb := &p.jobs[j]
	if jb.gpus == nil {
		jb.gpus = p.gpuList(jb.req.GPUs)
	}
	jb.gpus = append(jb.gpus, g)
}

// gpuList returns an empty GPU list with room for n GPUs, capped there
// (an append beyond copies it), cut from one array for all jobs.
func (p *problem) gpuList(n int) []int {
	if len(p.slab)+n > cap(p.slab) {
		p.slab = make([]int, 0, max(2*cap(p.slab), n, 1024))
	}
	start := len(p.slab)
	p.slab = p.slab[:start+n]
	return p.slab[start : start : start+n]
}

// assignAll gives the GPUs gs to job j, which holds none: its GPU list
// shares gs (an append to it copies, nothing writes to it in place).
func (p *problem) assignAll(j int, gs []int) {
	for _, g := range gs {
		n, i := p.nodeOf(g)
		p.nodes[n].owner[i] = j
		p.addFree(n, -1)
	}
	if jb := &p.jobs[j]; len(jb.gpus) == 0 {
		jb.gpus = gs[:len(gs):len(gs)]
	} else {
		jb.gpus = append(jb.gpus, gs...)
	}
}

// release takes all GPUs from job j.
func (p *problem) release(j int) {
	for _, g := range p.jobs[j].gpus {
		n, i := p.nodeOf(g)
		p.nodes[n].owner[i] = -1
		p.addFree(n, 1)
	}
	p.jobs[j].gpus = nil
	p.jobs[j].placed = false
}
