package sia

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/configset"
)

// Validate checks the snapshot against every documented rule with default
// options, as Round does; Round validates with its own options. Errors are *InputError values wrapping ErrInvalidInput
// (or ErrInfeasible for pinned jobs that cannot fit).
//
// The rules, beyond the per-field ones documented on each type:
//
//   - Now is not the zero time, and no job is Submitted after it;
//   - node IDs are unique, every node has a type and at least one GPU, and
//     the GPUs of the cluster add up to at most MaxInt;
//   - a running job's Current shape fits the cluster (Nodes nodes of its
//     type holding GPUs GPUs), and (Round) its Placement lists exactly the
//     GPUs it holds, on known nodes of its type, within range, none listed
//     twice or held by another job;
//   - a pinned job (Restoring, or NonPreemptible and running) holds an
//     allocation within its bounds (MinGPUs, MaxGPUs, replica size, Types),
//     the pinned jobs of a type fit its capacity less Reserved, and the
//     pinned jobs a quota covers fit its Limit.
func (s *Snapshot) Validate() error {
	o := (*Options)(nil).WithDefaults()
	_, err := validateSnapshot(s, &o, true)
	return err
}

// validateSnapshot checks the snapshot and returns the per-round cluster
// view; placed requires running jobs to list their GPUs (Round and Place
// need them, the matrix does not). The jobs are checked on
// Options.Parallelism goroutines (validationWorkers), with the same result.
func validateSnapshot(s *Snapshot, o *Options, placed bool) (*cluster, error) {
	n := 0
	if s != nil {
		n = len(s.Jobs)
	}
	return validateWith(s, o, placed, validationWorkers(o, n))
}

// validateWith is validateSnapshot with the jobs checked on par goroutines
// (validateJobs).
func validateWith(s *Snapshot, o *Options, placed bool, par int) (*cluster, error) {
	if s == nil {
		return nil, &InputError{Field: "Snapshot", Reason: "nil snapshot"}
	}
	if s.Now.IsZero() {
		return nil, &InputError{Field: "Snapshot.Now", Reason: "zero time: the round needs the current time (job ages enter the restart factor)"}
	}
	nodes, err := validateNodes(s.Nodes)
	if err != nil {
		return nil, err
	}
	cl, err := newCluster(s.Nodes, nodes.byID, o.MaxGPUsPerJob)
	if err != nil {
		return nil, err
	}
	if err := validateReserved(s); err != nil {
		return nil, err
	}
	if err := validateQuotas(s, cl); err != nil {
		return nil, err
	}
	pins, err := validateJobs(s, cl, nodes, placed, par)
	if err != nil {
		return nil, err
	}
	if placed {
		cl.gpus = nodes
	}
	if err := validatePins(s, cl, pins); err != nil {
		return nil, err
	}
	if err := validateQuotaPins(s, pins); err != nil {
		return nil, err
	}
	return cl, nil
}

// validateNodes checks the nodes (IDs unique and not empty, a type, 1 to
// MaxGPUsPerNode GPUs, at most MaxInt in all) and returns their index.
func validateNodes(ns []Node) (*gpuIndex, error) {
	nodes := &gpuIndex{byID: make(map[string]int, len(ns)), base: make([]int, len(ns)), stamp: make([]int32, len(ns))}
	total := 0
	for i := range ns {
		n := &ns[i]
		field := func() string { return "Nodes[" + strconv.Itoa(i) + "]" }
		nodes.byID[n.ID] = i // one map operation: a duplicate leaves the length
		dup := len(nodes.byID) == i
		switch {
		case n.ID == "":
			return nil, &InputError{Type: n.Type, Field: field() + ".ID", Reason: "empty node ID"}
		case dup:
			return nil, &InputError{Node: n.ID, Field: field() + ".ID", Reason: "duplicate node ID"}
		case n.Type == "":
			return nil, &InputError{Node: n.ID, Field: field() + ".Type", Reason: "empty GPU type"}
		case n.GPUs <= 0 || n.GPUs > configset.MaxGPUsPerNode:
			return nil, &InputError{Node: n.ID, Type: n.Type, Field: field() + ".GPUs", Reason: fmt.Sprintf("%d, want 1..%d", n.GPUs, configset.MaxGPUsPerNode)}
		}
		nodes.base[i] = total
		if total > math.MaxInt-n.GPUs {
			return nil, &InputError{Node: n.ID, Type: n.Type, Field: field() + ".GPUs", Reason: "the cluster's GPUs add up to more than MaxInt"}
		}
		total += n.GPUs
	}
	// total ≤ nodes × MaxGPUsPerNode: one owner slot per GPU is linear in
	// the snapshot.
	nodes.owner = make([]int32, total)
	nodes.nodes = ns
	return nodes, nil
}

// validateReserved checks Snapshot.Reserved: a type name and at least 0 (in
// sorted order, so the first error is always the same). An entry above its
// type's capacity (some of its nodes down or drained this round, or none)
// withholds the whole type: see reservedGPUs.
func validateReserved(s *Snapshot) error {
	for _, t := range slices.Sorted(maps.Keys(s.Reserved)) {
		switch r := s.Reserved[t]; {
		case t == "":
			return &InputError{Field: "Reserved", Reason: "empty GPU type"}
		case r < 0:
			return &InputError{Type: t, Field: "Reserved", Reason: fmt.Sprintf("%d, want >= 0", r)}
		}
	}
	return nil
}

// reservedGPUs is how many GPUs of type t Snapshot.Reserved withholds this
// round: its entry, at most the type's capacity (0 for a type no node has).
func reservedGPUs(s *Snapshot, cl *cluster, t string) int {
	return min(s.Reserved[t], cl.capacity[t])
}

// validateJobs checks every job (checkJobAlone, validatePlacement) and
// that no two share an ID, counts them for the round's budget
// (cluster.counts), and returns the pinned jobs (by index in s.Jobs), to
// be checked together. With par ≥ 2
// workers the checks of each job on its own (checkJobAlone) run on chunks
// of the jobs in parallel first; the checks across jobs (placement, IDs)
// then run in order: the first error is the sequential one either way.
func validateJobs(s *Snapshot, cl *cluster, nodes *gpuIndex, placed bool, par int) (pins []int, err error) {
	var ids *jobIDs
	if par <= 1 {
		ids = newJobIDs(len(s.Jobs))
	}
	dup := scanJobs(s.Jobs, cl, ids)
	tt := newTypeTable(cl)
	bad, badErr := len(s.Jobs), error(nil)
	if par > 1 {
		dup, bad, badErr = checkJobsParallel(s, cl, tt, placed, par)
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if par <= 1 {
			if err := checkJobAlone(j, i, s, cl, tt, placed, tt.held); err != nil {
				return nil, err
			}
		} else if i == bad {
			return nil, badErr
		}
		if j.State.Current.Running() {
			if err := validatePlacement(j, i, s, nodes, &cl.cur[cl.curAt[i]-1]); err != nil {
				return nil, err
			}
		}
		if i == dup {
			return nil, &InputError{Job: j.ID, Field: "Jobs[" + strconv.Itoa(i) + "].ID", Reason: "duplicate job ID"}
		}
		if pinned(j, s.Now) {
			pins = append(pins, i)
		}
	}
	cl.counts = jobCounts{ok: true, running: len(cl.cur), held: tt.heldByName()}
	return pins, nil
}

// scanJobs reads every job once before the checks, in a short loop of
// independent reads (the jobs and their IDs' bytes lie apart in memory,
// and such a loop waits for several at once): it returns the index of the
// first job whose ID an earlier job has (len(jobs): none, or ids nil; the
// IDs are then not read), adding them to ids, and sizes cl.cur for the
// jobs that hold GPUs (Current.GPUs > 0, valid or not), giving each its
// slot: curAt[i] = 1 + the number of such jobs before job i (0: none). A
// valid snapshot fills every slot. Whether job
// i's ID repeats an earlier one does not depend on the other checks, so
// validateJobs reports it when its pass in order reaches job i.
func scanJobs(jobs []Job, cl *cluster, ids *jobIDs) (dup int) {
	dup = len(jobs)
	var at []int32
	n := int32(0)
	for i := range jobs {
		if ids != nil && dup == len(jobs) && ids.add(jobs, i) {
			dup = i
		}
		if jobs[i].State.Current.Running() {
			if at == nil {
				at = make([]int32, len(jobs))
			}
			n++
			at[i] = n
		}
	}
	cl.curAt, cl.cur = at, nil
	if n > 0 {
		cl.cur = make([]curModel, n)
	}
	return dup
}

// checkJobsParallel runs checkJobAlone on par contiguous chunks of the
// jobs, each on its own goroutine (the caller's takes the first), each
// stopping at its first error or once a lower chunk has failed; the last
// goroutine first finds the first duplicate ID (jobIDs.firstDup), which
// it returns as dup. It returns the lowest index of a job that fails with
// its error (len(s.Jobs), nil: none), and adds the chunks' held GPUs to
// tt.held.
func checkJobsParallel(s *Snapshot, cl *cluster, tt *typeTable, placed bool, par int) (dup, bad int, err error) {
	n := len(s.Jobs)
	type result struct {
		bad  int
		err  error
		held []int
	}
	res := make([]result, par)
	var lowest atomic.Int64
	lowest.Store(int64(n))
	run := func(w int) {
		if w == par-1 {
			dup = newJobIDs(n).firstDup(s.Jobs)
		}
		lo, hi := w*n/par, (w+1)*n/par
		r := &res[w]
		r.bad, r.held = n, make([]int, len(tt.names))
		for i := lo; i < hi && int64(i) < lowest.Load(); i++ {
			if err := checkJobAlone(&s.Jobs[i], i, s, cl, tt, placed, r.held); err != nil {
				r.bad, r.err = i, err
				for { // lower the bound others stop at (i is below it if w's chunk is first)
					if cur := lowest.Load(); int64(i) >= cur || lowest.CompareAndSwap(cur, int64(i)) {
						break
					}
				}
				return
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < par; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			run(w)
		}(w)
	}
	run(0)
	wg.Wait()
	for w := range res {
		if res[w].err != nil {
			return dup, res[w].bad, res[w].err // chunks in order: the lowest index
		}
		for k, g := range res[w].held {
			tt.held[k] += g
		}
	}
	return dup, n, nil
}

// validationWorkers is the number of goroutines that check the jobs on
// their own (checkJobsParallel): Options.Parallelism, at most one per
// minJobsPerWorker jobs (1: the caller's only).
func validationWorkers(o *Options, jobs int) int { return workers(o, jobs) }

// typeTable indexes the cluster's GPU types for validation: a job's type
// name is looked up once (index), then its capacity, node sizes and the
// GPUs its running jobs hold are read by that index, without a map per
// field.
type typeTable struct {
	names  []string
	cap    []int
	sizes  [][]sizeCount
	held   []int          // GPUs held per type by the valid running jobs (sequential checks)
	byName map[string]int // name -> index, for many types (nil: names are scanned)
}

// manyTypes is the number of GPU types above which typeTable looks names
// up in a map rather than scanning them.
const manyTypes = 16

// newTypeTable returns the cluster's types with their capacities and
// node sizes.
func newTypeTable(cl *cluster) *typeTable {
	n := len(cl.types)
	tt := &typeTable{names: cl.types, cap: make([]int, n), sizes: make([][]sizeCount, n), held: make([]int, n)}
	for k, t := range cl.types {
		tt.cap[k], tt.sizes[k] = cl.capacity[t], cl.shapes[t]
	}
	if n > manyTypes {
		tt.byName = make(map[string]int, n)
		for k, t := range cl.types {
			tt.byName[t] = k
		}
	}
	return tt
}

// index returns the index of GPU type t (false: not a type of the
// cluster). The names a host passes are mostly the very strings of its
// nodes' types, which compare without reading their bytes.
func (tt *typeTable) index(t string) (int, bool) {
	if tt.byName != nil {
		k, ok := tt.byName[t]
		return k, ok
	}
	for k := range tt.names {
		if tt.names[k] == t {
			return k, true
		}
	}
	return -1, false
}

// heldByName returns the held GPUs by type name, for the types some
// running job holds (jobCounts.held).
func (tt *typeTable) heldByName() map[string]int {
	m := make(map[string]int, len(tt.names))
	for k, g := range tt.held {
		if g > 0 {
			m[tt.names[k]] = g
		}
	}
	return m
}

// jobIDs finds the first job whose ID an earlier job has, without a map
// of the IDs: an open-addressing table (linear probing, at most 3/4 full)
// whose slots hold 32 bits of an ID's hash and its job's index, with no
// pointers for the garbage collector to scan; two IDs are compared only
// when those bits are equal. Its seed is random (hash/maphash), which
// changes its speed, never its answer.
type jobIDs struct {
	seed maphash.Seed
	mask uint64
	slot []uint64 // tag<<32 | job index; 0: free (a tag is never 0)
}

// newJobIDs returns a set for n IDs.
func newJobIDs(n int) *jobIDs {
	size := 8
	for size-size/4 < n {
		size *= 2
	}
	return &jobIDs{seed: maphash.MakeSeed(), mask: uint64(size - 1), slot: make([]uint64, size)}
}

// firstDup adds the IDs of jobs in order and returns the index of the
// first job whose ID an earlier job has (len(jobs): none).
func (s *jobIDs) firstDup(jobs []Job) int {
	for i := range jobs {
		if s.add(jobs, i) {
			return i
		}
	}
	return len(jobs)
}

// add adds the ID of jobs[i] (i < 2³²) and reports whether an earlier job
// has it.
func (s *jobIDs) add(jobs []Job, i int) bool {
	id := jobs[i].ID
	h := maphash.String(s.seed, id)
	tag := (h>>32 | 1) << 32
	for k := h & s.mask; ; k = (k + 1) & s.mask {
		v := s.slot[k]
		if v == 0 {
			s.slot[k] = tag | uint64(uint32(i))
			return false
		}
		if v&^(1<<32-1) == tag && jobs[uint32(v)].ID == id {
			return true
		}
	}
}

// validateQuotaPins checks that the pinned jobs (pins) each quota covers,
// counted on its type (all types for ""), fit its Limit: pinned GPUs
// cannot be given back. The error names the quota's Limit and the first
// pinned job that does not fit.
func validateQuotaPins(s *Snapshot, pins []int) error {
	if len(s.Quotas) == 0 || len(pins) == 0 {
		return nil
	}
	at := make(map[string]int, len(pins))
	for _, i := range pins {
		at[s.Jobs[i].ID] = i
	}
	for qi, q := range s.Quotas {
		used := 0
		for _, id := range q.Jobs {
			i, ok := at[id]
			if !ok {
				continue
			}
			cur := s.Jobs[i].State.Current
			if q.Type != "" && cur.Type != q.Type {
				continue
			}
			if used > q.Limit-cur.GPUs { // counts ≤ capacity, Limit ≥ 0: no overflow
				return &InfeasibleError{Job: id, Type: cur.Type, Field: fmt.Sprintf("Quotas[%d].Limit", qi),
					Reason: fmt.Sprintf("quota %q: limit %d, but its pinned jobs (checkpoint-restore, non-preemptible) hold %d GPUs with job %q's %d", q.Name, q.Limit, used+cur.GPUs, id, cur.GPUs)}
			}
			used += cur.GPUs
		}
	}
	return nil
}

// shapes are, per type, its node sizes with their counts, largest first:
// what k nodes of the type hold together (most) and how many it has.
type shapes map[string][]sizeCount

// sizeCount is a node size and the number of nodes of that size.
type sizeCount struct{ size, count int }

// newShapes returns the shapes of the node groups (one per type and size).
func newShapes(groups []configset.NodeGroup) shapes {
	sh := shapes{}
	for _, g := range groups {
		sh[g.Type] = append(sh[g.Type], sizeCount{g.GPUsPerNode, g.Nodes})
	}
	for _, s := range sh {
		slices.SortFunc(s, func(a, b sizeCount) int { return b.size - a.size })
	}
	return sh
}

// most returns the most GPUs that k nodes of type t hold together (at
// most the cluster's GPUs, checked against MaxInt).
func (sh shapes) most(t string, k int) int { return mostOf(sh[t], k) }

// mostOf returns the most GPUs that k nodes of sizes ss (largest first)
// hold together.
func mostOf(ss []sizeCount, k int) int {
	total := 0
	for _, s := range ss {
		if k <= 0 {
			break
		}
		n := min(k, s.count)
		total += n * s.size
		k -= n
	}
	return total
}

// nodes returns the number of nodes of type t.
func (sh shapes) nodes(t string) int { return nodesIn(sh[t]) }

// nodesIn returns the number of nodes of sizes ss.
func nodesIn(ss []sizeCount) int {
	n := 0
	for _, s := range ss {
		n += s.count
	}
	return n
}

// pinned reports whether the job is pinned to its current allocation.
func pinned(j *Job, now time.Time) bool {
	return j.State.Current.Running() && (j.State.restoring(now) || j.NonPreemptible)
}

// validatePins checks that the pinned jobs of each type (pins, by index in
// s.Jobs, in order) fit its capacity less Reserved (sums checked for
// overflow: each count is at most the capacity).
func validatePins(s *Snapshot, cl *cluster, pins []int) error {
	used := map[string]int{}
	for _, i := range pins {
		j := &s.Jobs[i]
		t := j.State.Current.Type
		avail := cl.capacity[t] - reservedGPUs(s, cl, t)
		if used[t] > avail-j.State.Current.GPUs {
			return &InfeasibleError{Job: j.ID, Type: t, Field: fmt.Sprintf("Jobs[%d].State.Current.GPUs", i),
				Reason: fmt.Sprintf("%d pinned GPUs, but the pinned jobs before it already hold %d of the %d the type offers (capacity less Reserved)", j.State.Current.GPUs, used[t], avail)}
		}
		used[t] += j.State.Current.GPUs
	}
	return nil
}

// gpuIndex finds the snapshot's nodes by ID and records which job holds
// each GPU, in slices indexed by node and GPU (no map per GPU or per job).
type gpuIndex struct {
	nodes []Node
	byID  map[string]int // node ID -> index in nodes
	base  []int          // per node: the slot of its GPU 0 in owner
	owner []int32        // per GPU: the holding job's index + 1, 0 = free
	stamp []int32        // per node: the last job (index + 1) that listed a GPU on it
}

// node returns the index of the node with the given ID (false: none).
func (g *gpuIndex) node(id string) (int, bool) {
	k, ok := g.byID[id]
	return k, ok
}

// slots returns the owners of node k's GPUs (by index).
func (g *gpuIndex) slots(k int) []int32 {
	n := g.nodes[k].GPUs
	return g.owner[g.base[k] : g.base[k]+n : g.base[k]+n]
}

// checkJobAlone checks job i of the snapshot on its own: its fields, its
// state and, for a running job, its current allocation (shape, pins,
// replica size), keeping its model in cl.cur (slot curAt[i]) and adding
// its GPUs to held (by type index). It reads the snapshot, cl and tt
// only: jobs check in parallel (checkJobsParallel). validateJobs then
// checks what depends on the other jobs (placement, IDs).
func checkJobAlone(j *Job, i int, s *Snapshot, cl *cluster, tt *typeTable, placed bool, held []int) error {
	bad := func(f, format string, args ...any) error {
		return &InputError{Job: j.ID, Field: fmt.Sprintf("Jobs[%d]", i) + f, Reason: fmt.Sprintf(format, args...)}
	}
	if err := validateJobFields(j, i, s, bad); err != nil {
		return err
	}
	if err := validateJobState(&j.State, bad); err != nil || !j.State.Current.Running() {
		return err
	}
	k, err := validateCurrentShape(j, i, tt, placed, bad)
	if err != nil {
		return err
	}
	pin := pinned(j, s.Now)
	if pin {
		if err := validatePinnedBounds(j, i); err != nil {
			return err
		}
	}
	if err := validateReplicaSize(j, i, pin, &cl.cur[cl.curAt[i]-1]); err != nil {
		return err
	}
	held[k] += j.State.Current.GPUs
	return nil
}

// badField makes the InputError of one of a job's fields (see checkJobAlone).
type badField func(field, format string, args ...any) error

// validateJobFields checks the job's own fields: ID, Kind, Models, the GPU
// bounds, Submitted and Types.
func validateJobFields(j *Job, i int, s *Snapshot, bad badField) error {
	switch {
	case j.ID == "":
		return bad(".ID", "empty job ID")
	case j.Kind < Adaptive || j.Kind > Rigid:
		return bad(".Kind", "unknown kind %d", int(j.Kind))
	case j.Models == nil:
		return bad(".Models", "nil (every job needs models, e.g. a *bootstrap.Tracker)")
	case j.MinGPUs < 0:
		return bad(".MinGPUs", "%d, want >= 0", j.MinGPUs)
	case j.MaxGPUs < 0:
		return bad(".MaxGPUs", "%d, want >= 0 (0 = no bound)", j.MaxGPUs)
	case j.MaxGPUs > 0 && j.MinGPUs > j.MaxGPUs:
		return bad(".MinGPUs", "%d exceeds MaxGPUs %d", j.MinGPUs, j.MaxGPUs)
	case j.Kind == Rigid && j.GPUs <= 0:
		return bad(".GPUs", "%d, a rigid job needs a fixed GPU count > 0", j.GPUs)
	case j.Kind != Rigid && j.GPUs != 0:
		return bad(".GPUs", "%d, only rigid jobs have a fixed GPU count (use MinGPUs/MaxGPUs)", j.GPUs)
	case !j.Submitted.IsZero() && j.Submitted.After(s.Now):
		return bad(".Submitted", "%v is after Snapshot.Now %v", j.Submitted, s.Now)
	case j.Types != nil && len(j.Types) == 0:
		return bad(".Types", "empty list (nil means every type)")
	}
	for k, t := range j.Types {
		if t == "" {
			return bad(fmt.Sprintf(".Types[%d]", k), "empty GPU type name")
		}
		if slices.Index(j.Types, t) < k {
			return &InputError{Job: j.ID, Type: t, Field: fmt.Sprintf("Jobs[%d].Types[%d]", i, k), Reason: "type listed twice"}
		}
	}
	return nil
}

// validateJobState checks the job's history and, for a job that holds no
// GPUs, that its Current is empty and it is not restoring.
func validateJobState(st *JobState, bad badField) error {
	switch {
	case st.Restarts < 0:
		return bad(".State.Restarts", "%d, want >= 0", st.Restarts)
	case st.RestartCost < 0:
		return bad(".State.RestartCost", "%v, want >= 0", st.RestartCost)
	case st.PeakReplicas < 0:
		return bad(".State.PeakReplicas", "%d, want >= 0", st.PeakReplicas)
	}
	if cur := st.Current; !cur.Running() {
		switch {
		case cur.GPUs < 0:
			return bad(".State.Current.GPUs", "%d, want >= 0", cur.GPUs)
		case cur.Type != "" || cur.Nodes != 0 || len(cur.Placement) != 0:
			return bad(".State.Current", "GPUs = 0 but Type, Nodes or Placement set")
		case st.Restoring:
			return bad(".State.Restoring", "set for a job that holds no GPUs")
		}
	}
	return nil
}

// validateCurrentShape checks that a running job's Current fits the
// cluster (Nodes nodes of its type holding GPUs GPUs) and (placed) lists
// its GPUs. A rigid job's count need not match it: an unpinned job whose
// bounds changed is re-decided within them (validatePinnedBounds checks
// the pinned ones). It returns the index of the job's type in tt.
func validateCurrentShape(j *Job, i int, tt *typeTable, placed bool, bad badField) (int, error) {
	cur := &j.State.Current
	k, ok := tt.index(cur.Type)
	if !ok {
		return k, &InputError{Job: j.ID, Type: cur.Type, Field: "Jobs[" + strconv.Itoa(i) + "].State.Current.Type", Reason: "not a GPU type of the cluster"}
	}
	cap, ss := tt.cap[k], tt.sizes[k] // the type's capacity and node sizes
	switch {
	case cur.Nodes < 1 || cur.Nodes > cur.GPUs:
		return k, bad(".State.Current.Nodes", "%d, want 1..GPUs (%d)", cur.Nodes, cur.GPUs)
	case cur.GPUs > cap:
		return k, bad(".State.Current.GPUs", "%d exceeds the capacity %d of type %q", cur.GPUs, cap, cur.Type)
	case cur.Nodes > nodesIn(ss):
		return k, bad(".State.Current.Nodes", "%d, but the cluster has %d nodes of type %q", cur.Nodes, nodesIn(ss), cur.Type)
	case cur.GPUs > mostOf(ss, cur.Nodes):
		return k, bad(".State.Current.GPUs", "%d GPUs do not fit on %d nodes of type %q (at most %d)", cur.GPUs, cur.Nodes, cur.Type, mostOf(ss, cur.Nodes))
	case placed && len(cur.Placement) == 0:
		return k, bad(".State.Current.Placement", "empty for a running job: list the %d GPUs it holds (or clear Current if they are unknown: the job is then queued)", cur.GPUs)
	case len(cur.Placement) != 0 && len(cur.Placement) != cur.GPUs:
		return k, bad(".State.Current.Placement", "%d GPUs listed for an allocation of %d", len(cur.Placement), cur.GPUs)
	}
	return k, nil
}

// validateReplicaSize checks that a running job (pinned: pin) holds whole
// replicas of its model on its type (unless its models exclude the type),
// and keeps the model in cm (its slot of cl.cur) for the matrix: the round
// asks a job's Models for the type it runs on once.
func validateReplicaSize(j *Job, i int, pin bool, cm *curModel) error {
	cur := &j.State.Current
	cm.m, cm.src = j.Models.Model(cur.Type)
	src := cm.src
	if src == bootstrap.Excluded && pin {
		return &InputError{Job: j.ID, Type: cur.Type, Field: "Jobs[" + strconv.Itoa(i) + "].State.Current.Type",
			Reason: "the job's Models exclude the type it runs on, but the job is pinned (Restoring or NonPreemptible) and cannot move"}
	}
	if src == bootstrap.Excluded {
		return nil
	}
	p, err := replicaSize(j, cur.Type, cm.m.Stages)
	if err != nil {
		return atJob(err, i)
	}
	if cur.GPUs%p != 0 && pin { // else resized, moved or preempted
		return &InputError{Job: j.ID, Type: cur.Type, Field: "Jobs[" + strconv.Itoa(i) + "].State.Current.GPUs",
			Reason: fmt.Sprintf("%d is not a multiple of the job's replica size on the type (%d pipeline stages)", cur.GPUs, p)}
	}
	return nil
}

// validatePlacement checks a running job's listed GPUs: on known nodes of
// its type, within range, none listed twice or held by an earlier job, on
// exactly Current.Nodes nodes; it records them in nodes, and in cm the
// sizes of the nodes they lie on.
func validatePlacement(j *Job, i int, s *Snapshot, nodes *gpuIndex, cm *curModel) error {
	cur := j.State.Current
	me := int32(i + 1)
	spans := 0
	prev, ni := "", -1 // the last node looked up (a placement lists a node's GPUs together)
	for k, g := range cur.Placement {
		f := func() string { return "Jobs[" + strconv.Itoa(i) + "].State.Current.Placement[" + strconv.Itoa(k) + "]" }
		if ni < 0 || g.Node != prev {
			var ok bool
			if ni, ok = nodes.node(g.Node); !ok {
				return &InputError{Job: j.ID, Node: g.Node, Field: f(), Reason: "unknown node"}
			}
			prev = g.Node
		}
		n := &nodes.nodes[ni]
		switch {
		case n.Type != cur.Type:
			return &InputError{Job: j.ID, Node: g.Node, Type: n.Type, Field: f(), Reason: fmt.Sprintf("node of type %q, allocation of type %q", n.Type, cur.Type)}
		case g.Index < 0 || g.Index >= n.GPUs:
			return &InputError{Job: j.ID, Node: g.Node, Field: f(), Reason: fmt.Sprintf("GPU index %d, node has %d GPUs", g.Index, n.GPUs)}
		}
		slot := nodes.base[ni] + g.Index
		if other := nodes.owner[slot]; other != 0 {
			if other == me {
				return &InputError{Job: j.ID, Node: g.Node, Field: f(), Reason: fmt.Sprintf("GPU %d listed twice", g.Index)}
			}
			return &InputError{Job: j.ID, Node: g.Node, Field: f(), Reason: fmt.Sprintf("GPU %d also held by job %q", g.Index, s.Jobs[other-1].ID)}
		}
		nodes.owner[slot] = me
		if nodes.stamp[ni] != me {
			nodes.stamp[ni] = me
			spans++
			if r := int32(n.GPUs); spans == 1 {
				cm.minR, cm.maxR = r, r
			} else {
				cm.minR, cm.maxR = min(cm.minR, r), max(cm.maxR, r)
			}
		}
	}
	if len(cur.Placement) != 0 && spans != cur.Nodes {
		return &InputError{Job: j.ID, Field: "Jobs[" + strconv.Itoa(i) + "].State.Current.Nodes", Reason: fmt.Sprintf("%d, but the placement spans %d nodes", cur.Nodes, spans)}
	}
	return nil
}

// validatePinnedBounds checks that a pinned job's allocation, which the
// round cannot change, lies within the job's own bounds: a host that pins a
// job outside them contradicts itself.
func validatePinnedBounds(j *Job, i int) error {
	cur := j.State.Current
	if (j.Kind != Rigid || cur.GPUs == j.GPUs) && (j.Kind == Rigid || cur.GPUs >= max(j.MinGPUs, 1) && (j.MaxGPUs <= 0 || cur.GPUs <= j.MaxGPUs)) &&
		(j.Types == nil || slices.Contains(j.Types, cur.Type)) {
		return nil // within its bounds: no message built (a pinned job's common case)
	}
	why := "is pinned (Restoring or NonPreemptible), so it cannot be resized"
	f := fmt.Sprintf("Jobs[%d].State.Current", i)
	if j.Kind == Rigid && cur.GPUs != j.GPUs {
		return &InputError{Job: j.ID, Type: cur.Type, Field: f + ".GPUs", Reason: fmt.Sprintf("%d, but the rigid job's count is %d and the job %s", cur.GPUs, j.GPUs, why)}
	}
	if j.Kind != Rigid {
		if cur.GPUs < max(j.MinGPUs, 1) {
			return &InputError{Job: j.ID, Type: cur.Type, Field: f + ".GPUs", Reason: fmt.Sprintf("%d is below MinGPUs %d, but the job %s", cur.GPUs, j.MinGPUs, why)}
		}
		if j.MaxGPUs > 0 && cur.GPUs > j.MaxGPUs {
			return &InputError{Job: j.ID, Type: cur.Type, Field: f + ".GPUs", Reason: fmt.Sprintf("%d exceeds MaxGPUs %d, but the job %s", cur.GPUs, j.MaxGPUs, why)}
		}
	}
	if j.Types != nil && !slices.Contains(j.Types, cur.Type) {
		return &InputError{Job: j.ID, Type: cur.Type, Field: f + ".Type", Reason: "not in the job's Types, but the job " + strings.Replace(why, "resized", "moved", 1)}
	}
	return nil
}

func validateQuotas(s *Snapshot, cl *cluster) error {
	if len(s.Quotas) == 0 {
		return nil
	}
	ids := make(map[string]bool, len(s.Jobs))
	for i := range s.Jobs {
		ids[s.Jobs[i].ID] = true
	}
	for i, q := range s.Quotas {
		field := fmt.Sprintf("Quotas[%d]", i)
		if q.Limit < 0 {
			return &InputError{Field: field + ".Limit", Reason: fmt.Sprintf("quota %q: %d, want >= 0", q.Name, q.Limit)}
		}
		seen := map[string]bool{}
		for _, id := range q.Jobs {
			if !ids[id] {
				return &InputError{Job: id, Field: field + ".Jobs", Reason: fmt.Sprintf("quota %q: no such job in the snapshot", q.Name)}
			}
			if seen[id] {
				return &InputError{Job: id, Field: field + ".Jobs", Reason: fmt.Sprintf("quota %q: job listed twice", q.Name)}
			}
			seen[id] = true
		}
	}
	return nil
}
