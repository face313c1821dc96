package ilp

import (
	"cmp"
	"maps"
	"slices"
)

// This file holds the coupling rows as the late path reads them: which
// rows an option enters, found without testing every quota of its job,
// and the rows' usage by a whole assignment, summed without entering the
// rows one option at a time. Both run after a deadline whatever the clock
// (the fallback plan, the late admission, the warm start's check), so their
// cost is the input's size (each quota's types and listed jobs, each job
// once), never jobs × quotas: with 4,000 quotas over every job, testing
// each warm-start option against every quota of its job took 45–77 ms
// past the deadline, and Check of the warm start 50 ms.

// lateRows is what the late path needs of the coupling rows: the row of
// each GPU type (types sorted, then one row per quota), the capacity left
// on each row, and an index of the quotas by what they cover.
type lateRows struct {
	typeRow map[string]int
	left    []int
	nt      int // the number of type rows
	// listed[i] are the quotas that list job i (Quota.Jobs), increasing;
	// nil until built (see lists) when members > 0
	listed  [][]int
	all     []bool // when non-nil, listed also holds the quotas over every job, all[qi] true: skipped
	members int    // the number of entries of the quotas' job lists
	// qRow[qi] is the type row of quota qi when it has a Type, -1 when it
	// counts every type, -2 when it has Types; qMin[qi] its MinGPUs (see
	// counts: compact copies, read without touching the Quota structs)
	qRow []int32
	qMin []int
	// The quotas over every job (AllJobs), by the types they count, each
	// list sorted by MinGPUs (then index): an option of g GPUs enters the
	// prefix of the quotas with MinGPUs <= g of anyType and of its type's
	// list, and no other quota over every job.
	anyType []int32 // those that count every type
	byType  []int32 // those of type row tr: byType[typeAt[tr]:typeAt[tr+1]]
	typeAt  []int32
}

// newLateRows computes the rows of p and the capacity assign leaves
// (assign must hold the pins: it is then feasible, by validation).
func newLateRows(p *Problem, assign []int) *lateRows {
	types := slices.Sorted(maps.Keys(p.Capacity))
	typeRow := make(map[string]int, len(types))
	for r, t := range types {
		typeRow[t] = r
	}
	// (the per-job lists of the listed quotas, built whatever the clock up
	// to listFree entries (see lists), in the index's pass over the
	// quotas: the usages below then read them, rather than each pass
	// over the quotas' own lists with per-job arrays of its own)
	rows := newLateIndex(p, typeRow, len(types), true)
	rows.left = make([]int, len(types)+len(p.Quotas))
	for r, t := range types {
		rows.left[r] = p.Capacity[t] - p.Reserved[t]
	}
	for qi := range p.Quotas {
		rows.left[len(types)+qi] = p.Quotas[qi].Limit
	}
	if !slices.ContainsFunc(assign, func(k int) bool { return k >= 0 }) {
		return rows // (no pin: the capacity is all left)
	}
	used := rows.usage(p, len(assign), func(i int) int { return assign[i] })
	for r := range rows.left {
		rows.left[r] -= used[r]
	}
	return rows
}

// newLateIndex returns the rows of p with the quota index built, typeRow
// mapping each of the nt types to its row (left is the caller's). With
// lists, the per-job lists of the listed quotas are built too when they
// hold at most listFree entries (counted in the same pass over the
// quotas); otherwise they are built when first needed (lists).
func newLateIndex(p *Problem, typeRow map[string]int, nt int, lists bool) *lateRows {
	rows := &lateRows{typeRow: typeRow, nt: nt, typeAt: make([]int32, nt+1)}
	rows.qRow, rows.qMin = make([]int32, len(p.Quotas)), make([]int, len(p.Quotas))
	var at []int32 // the listed entries of each job, counted while they fit listFree
	if lists {
		at = make([]int32, len(p.Jobs)+1)
	}
	nAll, top := 0, 0
	lastType, lastRow := "", int32(-1)
	for qi := range p.Quotas {
		q := &p.Quotas[qi]
		rows.qMin[qi] = q.MinGPUs
		if q.AllJobs {
			nAll++
			top = max(top, q.MinGPUs)
		} else {
			rows.members += len(q.Jobs)
			if at != nil && rows.members > listFree {
				at = nil
			}
			for _, ji := range q.Jobs {
				if at == nil {
					break
				}
				at[ji+1]++
			}
		}
		switch {
		case q.Type != "":
			// (quotas of one type in a row: one look-up of its name)
			if lastRow < 0 || q.Type != lastType {
				lastType, lastRow = q.Type, int32(typeRow[q.Type])
			}
			rows.qRow[qi] = lastRow
		case len(q.Types) > 0:
			rows.qRow[qi] = -2
		default:
			rows.qRow[qi] = -1
		}
	}
	if at != nil && rows.members > 0 {
		rows.listed = placeListed(p, at, rows.members)
	}
	order := allJobsByMin(p, nAll, top)
	// count, then place, the quotas over every job per type row they count
	for pass := range 2 {
		for _, qi := range order {
			q := &p.Quotas[qi]
			switch {
			case q.Type != "":
				rows.indexType(pass, typeRow[q.Type], int(qi))
			case len(q.Types) > 0:
				for _, t := range q.Types {
					rows.indexType(pass, typeRow[t], int(qi))
				}
			case pass == 0:
				rows.anyType = append(rows.anyType, qi)
			}
		}
		if pass == 0 {
			n := int32(0)
			for tr := range nt {
				c := rows.typeAt[tr+1]
				rows.typeAt[tr+1] = n // from here on: where type row tr's list ends so far
				n += c
			}
			rows.byType = make([]int32, n)
		}
	}
	return rows
}

// allJobsByMin returns the quotas of p over every job (n of them, of
// MinGPUs at most top) sorted by MinGPUs, then index: the lists filled in
// this order come out sorted. MinGPUs
// below a few times the number of quotas (every real quota's) are sorted
// by counting, in time linear in the quotas; others by comparison.
func allJobsByMin(p *Problem, n, top int) []int32 {
	if n == 0 {
		return nil
	}
	order := make([]int32, 0, n)
	for qi := range p.Quotas {
		if p.Quotas[qi].AllJobs {
			order = append(order, int32(qi))
		}
	}
	if top > 4*n+1024 {
		slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(p.Quotas[a].MinGPUs, p.Quotas[b].MinGPUs) })
		return order
	}
	at := make([]int32, top+2) // at[m+1]: the quotas of MinGPUs m, then where they go
	for _, qi := range order {
		at[p.Quotas[qi].MinGPUs+1]++
	}
	for m := range top + 1 {
		at[m+1] += at[m]
	}
	out := make([]int32, n)
	for _, qi := range order {
		m := p.Quotas[qi].MinGPUs
		out[at[m]] = qi
		at[m]++
	}
	return out
}

// indexType counts (pass 0) or places (pass 1) quota qi in type row tr's
// list of the quotas over every job.
func (r *lateRows) indexType(pass, tr, qi int) {
	if pass == 0 {
		r.typeAt[tr+1]++
		return
	}
	r.byType[r.typeAt[tr+1]] = int32(qi)
	r.typeAt[tr+1]++
}

// listNanos is about the time listedQuotaLists takes per entry of the
// quotas' job lists, in nanoseconds (21 ms for 2·10^6 entries: the per-job
// lists are written at a stride); listFree is the number of entries below
// which the lists are built whatever the clock (about 0.3 ms, a sixth of
// the least allowance): without them a round out of time admits no job at
// all, and 5,000 quotas of one job each (5,000 entries) left every 5 ms
// solve without a warm start running nothing.
const (
	listNanos = 10
	listFree  = 1 << 15
)

// lists makes sure the per-job lists of listed quotas are built, building
// them when the time left before the clock's greedyEnd affords it, and
// reports whether they are: without them no option can be tested (which
// quotas cover its job is not known), but the usage of a whole assignment
// still can (by the quotas' own lists).
func (r *lateRows) lists(p *Problem, clk *clock) bool {
	if r.listed != nil || r.members == 0 {
		return true
	}
	if r.members > listFree && clk != nil && !clk.greedyAffords(listNanos*r.members) {
		return false
	}
	r.listed = listedQuotaLists(p)
	return true
}

// counts reports whether option o, of type row tr, counts toward quota qi
// (Quota.Counts, without comparing type names when the quota has a Type).
func (r *lateRows) counts(p *Problem, qi, tr int, o Option) bool {
	switch x := r.qRow[qi]; {
	case o.GPUs < r.qMin[qi]:
		return false
	case x >= 0:
		return int(x) == tr
	case x == -1:
		return true
	}
	return p.Quotas[qi].countsType(o.Type)
}

// listedAt returns the listed quotas of job i (built: see lists).
func (r *lateRows) listedAt(i int) []int {
	if r.listed == nil {
		return nil
	}
	return r.listed[i]
}

// listedQuotaLists returns, per job of p, the indices of the quotas that
// list it (Quota.Jobs; not those over every job) in increasing order, in
// one backing array; entries of jobs no quota lists are nil.
func listedQuotaLists(p *Problem) [][]int {
	at := make([]int32, len(p.Jobs)+1)
	size := 0
	for qi := range p.Quotas {
		if q := &p.Quotas[qi]; !q.AllJobs {
			size += len(q.Jobs)
			for _, ji := range q.Jobs {
				at[ji+1]++
			}
		}
	}
	return placeListed(p, at, size)
}

// placeListed returns listedQuotaLists(p) from at, where at[ji+1] is the
// number of listed quotas of job ji (size in all); it reuses at.
func placeListed(p *Problem, at []int32, size int) [][]int {
	n := len(p.Jobs)
	out := make([][]int, n)
	if size == 0 {
		return out
	}
	for ji := range n {
		at[ji+1] += at[ji] // at[ji]: where job ji's list starts
	}
	// (after the placing pass, at[ji] is where job ji's list ends, the
	// start of job ji+1's)
	flat := make([]int, size)
	for qi := range p.Quotas {
		if q := &p.Quotas[qi]; !q.AllJobs {
			for _, ji := range q.Jobs {
				flat[at[ji]] = qi
				at[ji]++
			}
		}
	}
	from := int32(0)
	for ji := range n {
		if end := at[ji]; from < end {
			out[ji] = flat[from:end:end]
			from = end
		}
	}
	return out
}

// allJobsOf returns the quotas over every job that an option of g GPUs of
// type row tr counts toward: a prefix of anyType and one of its type's
// list.
func (r *lateRows) allJobsOf(p *Problem, tr, g int) (anyQ, typed []int32) {
	return prefixMin(p, r.anyType, g), prefixMin(p, r.byType[r.typeAt[tr]:r.typeAt[tr+1]], g)
}

// prefixMin returns the prefix of qs (sorted by MinGPUs) of the quotas
// with MinGPUs <= g.
func prefixMin(p *Problem, qs []int32, g int) []int32 {
	lo, hi := 0, len(qs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p.Quotas[qs[mid]].MinGPUs <= g {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return qs[:lo]
}

// fits reports whether option o of job i fits the capacity left, and the
// number of rows it looked at (the work done).
func (r *lateRows) fits(p *Problem, i int, o Option) (bool, int) {
	tr := r.typeRow[o.Type]
	if o.GPUs > r.left[tr] {
		return false, 1
	}
	work := 1
	for _, qi := range r.listedAt(i) {
		work++
		if r.all != nil && r.all[qi] {
			continue
		}
		if r.counts(p, qi, tr, o) && o.GPUs > r.left[r.nt+qi] {
			return false, work
		}
	}
	anyQ, typed := r.allJobsOf(p, tr, o.GPUs)
	for _, qs := range [2][]int32{anyQ, typed} {
		for _, qi := range qs {
			work++
			if o.GPUs > r.left[r.nt+int(qi)] {
				return false, work
			}
		}
	}
	return true, work
}

// take subtracts option o of job i from the capacity left (it fits).
func (r *lateRows) take(p *Problem, i int, o Option) { r.add(p, i, o, -1) }

// give adds option o of job i back to the capacity left (it was taken).
func (r *lateRows) give(p *Problem, i int, o Option) { r.add(p, i, o, 1) }

// add adds sign × option o's GPUs to the capacity left on every row o of
// job i counts toward.
func (r *lateRows) add(p *Problem, i int, o Option, sign int) {
	tr := r.typeRow[o.Type]
	d := sign * o.GPUs
	r.left[tr] += d
	for _, qi := range r.listedAt(i) {
		if r.all != nil && r.all[qi] {
			continue
		}
		if r.counts(p, qi, tr, o) {
			r.left[r.nt+qi] += d
		}
	}
	anyQ, typed := r.allJobsOf(p, tr, o.GPUs)
	for _, qs := range [2][]int32{anyQ, typed} {
		for _, qi := range qs {
			r.left[r.nt+int(qi)] += d
		}
	}
}

// usage returns the GPUs the options opt(i) of the n jobs (-1: none) use
// on each row, each sum saturated at MaxInt. Its work is linear in the jobs, the listed quotas'
// entries of the jobs assigned and the types of the quotas over every job:
// each option adds its GPUs once to the bucket of its prefix in anyType
// and in its type's list, and the buckets are summed from the end.
func (r *lateRows) usage(p *Problem, n int, opt func(i int) int) []int {
	used := make([]int, r.nt+len(p.Quotas))
	anyB := make([]int, len(r.anyType)+1) // anyB[b]: GPUs of the options entering the first b
	typB := make([]int, len(r.byType)+r.nt)
	// opt and type row of each job, when the listed quotas are read by
	// their own lists
	var ks, trs []int
	if r.listed == nil && r.members > 0 {
		ks, trs = make([]int, n), make([]int, n)
	}
	assigned := 0
	for i := range n {
		k := opt(i)
		if ks != nil {
			ks[i] = k
		}
		if k < 0 {
			continue
		}
		assigned++
		o := p.Jobs[i].Options[k]
		tr := r.typeRow[o.Type]
		if trs != nil {
			trs[i] = tr
		}
		used[tr] = addCount(used[tr], o.GPUs)
		for _, qi := range r.listedAt(i) {
			// (counts, inline: a few array reads per entry)
			if o.GPUs < r.qMin[qi] || r.all != nil && r.all[qi] {
				continue
			}
			if x := r.qRow[qi]; x == -1 || int(x) == tr || x == -2 && p.Quotas[qi].countsType(o.Type) {
				used[r.nt+qi] = addCount(used[r.nt+qi], o.GPUs)
			}
		}
		anyQ, typed := r.allJobsOf(p, tr, o.GPUs)
		anyB[len(anyQ)] = addCount(anyB[len(anyQ)], o.GPUs)
		b := int(r.typeAt[tr]) + tr + len(typed) // type row tr's buckets start at typeAt[tr] + tr
		typB[b] = addCount(typB[b], o.GPUs)
	}
	// quota x of a list gets the buckets of the prefixes that hold it: b > x
	spread := func(qs []int32, buckets []int) {
		s := buckets[len(qs)]
		for x := len(qs) - 1; x >= 0; x-- {
			qi := r.nt + int(qs[x])
			used[qi] = addCount(used[qi], s)
			s = addCount(s, buckets[x])
		}
	}
	if ks != nil && assigned > 0 {
		r.listedUsage(p, ks, trs, used[r.nt:])
	}
	spread(r.anyType, anyB)
	for tr := range r.nt {
		lo, hi := int(r.typeAt[tr]), int(r.typeAt[tr+1])
		spread(r.byType[lo:hi], typB[lo+tr:hi+tr+1])
	}
	return used
}

// feasible reports whether assign is a feasible assignment of p, as
// Check's nil error does, in time linear in the jobs and the quotas'
// entries (Check enters every quota over every job for every job: 50 ms
// for a warm start of 2,000 jobs under 4,000 such quotas). rows is p's
// quota index (newLateIndex; its left is not read).
func feasible(p *Problem, assign []int, rows *lateRows) bool {
	if len(assign) != len(p.Jobs) {
		return false
	}
	for i, j := range p.Jobs {
		if a := assign[i]; a < -1 || a >= len(j.Options) || j.Pin >= 0 && a != j.Pin {
			return false
		}
	}
	used := rows.usage(p, len(assign), func(i int) int { return assign[i] })
	for t, c := range p.Capacity {
		if used[rows.typeRow[t]] > c-p.Reserved[t] {
			return false
		}
	}
	for qi := range p.Quotas {
		if used[rows.nt+qi] > p.Quotas[qi].Limit {
			return false
		}
	}
	return true
}

// allSkipMax is the most quotas over every job with which the late path
// reads the listed quotas of a job from the model's lists of the quotas
// covering it (jobQuotaLists, which also hold those over every job,
// skipped: see useJobQuotas). Building the listed quotas' own lists
// instead took 0.2-0.3 ms past a 20 ms deadline on the corpus's
// 4,000- and 5,000-job quota rounds (scattered writes over tens of
// thousands of entries); reading a few more entries per job tested is
// cheaper. With thousands of quotas over every job each job would read
// thousands: their own lists are built then.
const allSkipMax = 16

// useJobQuotas makes jobQuotas (jobQuotaLists(p)) the per-job lists of
// the listed quotas when they can be (see allSkipMax): as they are when no
// quota is over every job, else with those quotas marked to be skipped.
// Otherwise the lists are built when first needed (lists).
func (r *lateRows) useJobQuotas(p *Problem, jobQuotas [][]int) {
	n := 0
	for qi := range p.Quotas {
		if p.Quotas[qi].AllJobs {
			n++
		}
	}
	if n > allSkipMax || jobQuotas == nil {
		return
	}
	r.listed, r.all = jobQuotas, nil
	if n > 0 {
		r.all = make([]bool, len(p.Quotas))
		for qi := range p.Quotas {
			r.all[qi] = p.Quotas[qi].AllJobs
		}
	}
}

// lateIndex returns the late path's quota index of the model's problem
// (its left is nil: each use sets its own), built once for the warm
// start's check and the admission of the jobs the model does not hold.
func (m *model) lateIndex() *lateRows {
	if m.lateIdx == nil {
		// (before the build sets m.jobQuotas, the lists are built when
		// first needed)
		m.lateIdx = newLateIndex(m.p, m.typeRow, len(m.types), false)
		m.lateIdx.useJobQuotas(m.p, m.jobQuotas)
	}
	return m.lateIdx
}

// pinsOnQuotas returns the GPUs the pinned options of p use on each quota
// (sums saturated at MaxInt), by the quota index: linear in the pins, the
// quotas' types and their listed entries. Counting each quota over the
// pinned jobs took pins × quotas over every job: 2,000 jobs, half pinned,
// under 4,000 quotas over every job, 20-36 ms of validation past an
// expired deadline. The types' rows are numbered in the map's order: only
// the quotas' sums are read.
func pinsOnQuotas(p *Problem) []int {
	if len(p.Quotas) == 0 {
		return nil
	}
	if !slices.ContainsFunc(p.Jobs, func(j Job) bool { return j.Pin >= 0 }) {
		return make([]int, len(p.Quotas)) // (no pin: no index)
	}
	typeRow := make(map[string]int, len(p.Capacity))
	for t := range p.Capacity {
		typeRow[t] = len(typeRow)
	}
	rows := newLateIndex(p, typeRow, len(typeRow), false)
	return rows.usage(p, len(p.Jobs), func(i int) int { return p.Jobs[i].Pin })[len(typeRow):]
}

// listedUsage adds to used (one entry per quota) the GPUs of the options
// ks (one per job, -1: none; of type rows trs) on the listed quotas, by
// the quotas' own lists: one pass over their entries, each a few array
// reads (the quotas' MinGPUs and type rows hoisted out of the pass).
func (r *lateRows) listedUsage(p *Problem, ks, trs []int, used []int) {
	gs := make([]int, len(ks)) // the GPUs of each job's option (0: none)
	for i, k := range ks {
		if k >= 0 {
			gs[i] = p.Jobs[i].Options[k].GPUs
		}
	}
	for qi := range p.Quotas {
		q := &p.Quotas[qi]
		if len(q.Jobs) == 0 {
			continue
		}
		u, lo, x := used[qi], r.qMin[qi], int(r.qRow[qi])
		for _, i := range q.Jobs {
			g := gs[i]
			if g == 0 || g < lo {
				continue
			}
			if x >= 0 && trs[i] != x || x == -2 && !q.countsType(p.Jobs[i].Options[ks[i]].Type) {
				continue
			}
			u = addCount(u, g)
		}
		used[qi] = u
	}
}

// indexRows is the number of coupling rows above which the search checks
// and applies whole choices through the quota index (choiceUsage) rather
// than option by option over each option's rows: an option of a job
// under thousands of quotas over every job enters thousands of rows, and
// the check of a 2,000-job warm start under 4,000 such quotas took
// 0.6-0.8 ms past a 20 ms deadline, the capacity its incumbent leaves for
// the late admission 0.3 ms more. Both ways give the same sums.
const indexRows = 64

// choiceUsage returns the GPUs the model choice (one entry per model job,
// -1: none) uses on each of the model's rows (the pins, which the model's
// capacity already holds, not counted), through the quota index: linear
// in the jobs, the listed quotas' entries and the quotas' types.
func (m *model) choiceUsage(choice []int) []int {
	opt := make([]int, len(m.p.Jobs))
	for i := range opt {
		opt[i] = -1
	}
	for i, c := range choice {
		if c >= 0 {
			opt[m.jobs[i].orig] = int(m.jobs[i].opts[c].k)
		}
	}
	return m.lateIndex().usage(m.p, len(opt), func(i int) int { return opt[i] })
}

// fitsByIndex reports whether the model choice (see choiceUsage) fits
// the model's capacity on every row.
func (m *model) fitsByIndex(choice []int) bool {
	for r, u := range m.choiceUsage(choice) {
		if u > m.cap[r] {
			return false
		}
	}
	return true
}
