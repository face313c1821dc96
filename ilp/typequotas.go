package ilp

import (
	"math"
	"slices"
	"unsafe"
)

// typeQuotas holds, per distinct quota list of a problem's jobs (jobs
// covered by the same quotas share one) and per type row, the quotas of
// the list that count options of the type, computed once for every job
// that shares the list, when first asked for. A build on 5,000 jobs under
// two quotas each recomputed them per job and type, and sorted them by
// MinGPUs: a sixth of the build.
type typeQuotas struct {
	p      *Problem
	types  []string
	listOf []int32 // per job: the index of its quota list, -1 for none
	tabs   []typeQuotaTab
	ints   []int // the tables' lists, one after the other
	// rows[qi] has bit tr set when quota qi counts type row tr (up to 64
	// types; computed on a quota's first look, see counts)
	rows  []uint64
	known []bool
}

// typeQuotaTab is the table of one quota list and one type row.
type typeQuotaTab struct {
	quotas []int // the list's quotas that count the type, ascending (nil: not computed)
	// order is quotas sorted by MinGPUs (ties by index), and fit[n] the
	// largest option that fits alone in the rows of order[:n] (fit[0]
	// unbounded): the number of the quotas an option of g GPUs counts
	// toward is the number of MinGPUs in order at most g (quotaRun)
	order, fit []int
}

// newTypeQuotas numbers the distinct lists of jobQuotas (jobQuotaLists).
func newTypeQuotas(p *Problem, types []string, jobQuotas [][]int) *typeQuotas {
	tq := &typeQuotas{p: p, types: types, listOf: make([]int32, len(jobQuotas))}
	ids := map[string]int32{}
	var last []int
	id := int32(-1)
	for ji, l := range jobQuotas {
		switch {
		case len(l) == 0:
			tq.listOf[ji] = -1
			continue
		case len(l) == len(last) && &l[0] == &last[0]:
			// the same list as the previous job's (the lists of jobs
			// covered by quotas over every job only are one)
		default:
			// (a look-up with a key converted from bytes allocates nothing)
			key := unsafe.Slice((*byte)(unsafe.Pointer(&l[0])), len(l)*int(unsafe.Sizeof(l[0])))
			var ok bool
			if id, ok = ids[string(key)]; !ok {
				id = int32(len(ids))
				ids[string(key)] = id
			}
			last = l
		}
		tq.listOf[ji] = id
	}
	tq.tabs = make([]typeQuotaTab, len(ids)*len(types))
	return tq
}

// tab returns job ji's table for type row tr, its quotas computed.
func (tq *typeQuotas) tab(ji, tr int, jobQuotas [][]int) *typeQuotaTab {
	t := &tq.tabs[int(tq.listOf[ji])*len(tq.types)+tr]
	if t.quotas == nil {
		name := tq.types[tr]
		tq.room(len(jobQuotas[ji]))
		start := len(tq.ints)
		for _, qi := range jobQuotas[ji] {
			if tq.counts(qi, tr, name) {
				tq.ints = append(tq.ints, qi)
			}
		}
		t.quotas = tq.ints[start:len(tq.ints):len(tq.ints)]
	}
	return t
}

// counts reports whether quota qi counts type row tr (named name): from
// the quota's row mask, computed on its first look, when the problem has
// at most 64 types (under many overlapping quotas nearly every job has
// a quota list of its own, and comparing the quotas' type names for
// every job and type was a fifth of the build).
func (tq *typeQuotas) counts(qi, tr int, name string) bool {
	q := &tq.p.Quotas[qi]
	if len(tq.types) > 64 {
		return q.countsType(name)
	}
	if tq.rows == nil {
		tq.rows, tq.known = make([]uint64, len(tq.p.Quotas)), make([]bool, len(tq.p.Quotas))
	}
	if !tq.known[qi] {
		for r, t := range tq.types {
			if q.countsType(t) {
				tq.rows[qi] |= 1 << r
			}
		}
		tq.known[qi] = true
	}
	return tq.rows[qi]>>tr&1 != 0
}

// room makes room for n more ints in tq.ints: the tables' lists are
// slices of it, so that a full chunk is left to them and the next one
// allocated, instead of growing one slice by copies (on 5,000 jobs under
// twelve overlapping quotas, thousands of distinct lists: 8 MB of
// copies per build).
func (tq *typeQuotas) room(n int) {
	if cap(tq.ints)-len(tq.ints) < n {
		tq.ints = make([]int, 0, max(n, typeQuotaChunk))
	}
}

// typeQuotaChunk is the size of tq.ints's chunks (32 KB).
const typeQuotaChunk = 1 << 12

// quotasOf returns the quotas of job ji that count options of type row tr
// (none for a job no quota covers).
func (tq *typeQuotas) quotasOf(ji, tr int, jobQuotas [][]int) []int {
	if tq.listOf[ji] < 0 {
		return nil
	}
	return tq.tab(ji, tr, jobQuotas).quotas
}

// runOf returns job ji's quotas over type row tr by MinGPUs and their
// fits (see typeQuotaTab), for rows of capacity cap (m.cap, the types'
// rows first): computed once, so only after the pins are taken off it.
func (tq *typeQuotas) runOf(ji, tr int, jobQuotas [][]int, cap []int) (order, fit []int) {
	t := tq.tab(ji, tr, jobQuotas)
	if t.fit == nil {
		tq.room(2*len(t.quotas) + 1)
		start := len(tq.ints)
		tq.ints = append(tq.ints, t.quotas...)
		order := tq.ints[start:len(tq.ints):len(tq.ints)]
		slices.SortStableFunc(order, func(x, y int) int { return tq.p.Quotas[x].MinGPUs - tq.p.Quotas[y].MinGPUs })
		start = len(tq.ints)
		tq.ints = append(tq.ints, math.MaxInt)
		for _, qi := range order {
			tq.ints = append(tq.ints, min(tq.ints[len(tq.ints)-1], cap[len(tq.types)+qi]))
		}
		t.order, t.fit = order, tq.ints[start:len(tq.ints):len(tq.ints)]
	}
	return t.order, t.fit
}

// quotasOfType returns the quotas covering problem job ji that count
// options of type row tr, in increasing order (nil for none): computed
// once per distinct quota list and type, and shared by every job covered
// by the same quotas. The result is read-only.
func (m *model) quotasOfType(ji, tr int) []int {
	if m.tq == nil {
		m.tq = newTypeQuotas(m.p, m.types, m.jobQuotas)
	}
	return m.tq.quotasOf(ji, tr, m.jobQuotas)
}
