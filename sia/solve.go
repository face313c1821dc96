package sia

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/sia-sched/sia/ilp"
)

// solution is the outcome of the allocation step: at most one matrix entry
// per job.
type solution struct {
	// Choice has one element per matrix row: the index of the chosen entry
	// in Row.Entries, or −1 when the job gets no GPUs.
	Choice []int
	// Status is StatusOptimal, or StatusFeasible when the solver stopped
	// early (deadline, node limit) with a valid allocation.
	Status Status
	// Objective is the objective of Choice and Bound the solver's proven
	// bound on the optimum (equal to Objective when Optimal, up to the grid).
	Objective, Bound float64
	// spanCut says Status is StatusFeasible only because the enumeration
	// of configurations spanning pools left jobs out (solveSpans): the
	// round did not run out of time, so no job waits for "deadline".
	spanCut bool
}

// Problem returns the allocation problem (paper Eq. 2/4) of the matrix:
// options = the entries neither Dropped nor Dominated, with their Value; Unallocated = λ;
// capacities per pool (an option's type is its configuration's pool and its
// GPUs the entry's Charge), reservations per type (a row over the type's
// pools when it has several); pins. order gives the order in which
// rows become ilp jobs (nil = row order); optIdx[i][k] is the entry index of
// option k of row i. Entries spanning pools are not options (an option
// uses one capacity row): they are returned in spans, in position order,
// and a job pinned to one has no option in p.
func (m *goodputMatrix) problem(order []int) (p *ilp.Problem, optIdx [][]int, spans []spanOpt) {
	p = &ilp.Problem{Sense: m.Sense, Capacity: m.Capacity, Grid: m.Grid, Jobs: make([]ilp.Job, len(m.Rows))}
	m.addQuotas(p, order)
	m.addReservations(p)
	optIdx, spans = m.addOptions(p, order)
	return p, optIdx, spans
}

// addQuotas adds the matrix's quotas to p, their rows renumbered as ilp
// job positions (order, nil = row order).
func (m *goodputMatrix) addQuotas(p *ilp.Problem, order []int) {
	if len(m.Quotas) == 0 {
		return
	}
	pos := make([]int, len(m.Rows)) // row -> ilp job position
	for k := range pos {
		pos[k] = k
	}
	if order != nil {
		for k, r := range order {
			pos[r] = k
		}
	}
	for _, q := range m.Quotas {
		iq := q
		iq.Jobs = make([]int, len(q.Jobs))
		for k, r := range q.Jobs {
			iq.Jobs[k] = pos[r]
		}
		p.Quotas = append(p.Quotas, iq)
	}
}

// pinSpill sums, per pool, the GPUs pinned jobs hold outside their entry's
// pool (Row.spill): p withholds them from those pools.
func (m *goodputMatrix) pinSpill() map[string]int {
	spill := map[string]int{}
	for i := range m.Rows {
		if m.Rows[i].Pin >= 0 {
			for pl, n := range m.Rows[i].spill {
				spill[pl] += n
			}
		}
	}
	return spill
}

// addReservations withholds from p's pools what pinned jobs hold outside
// their pools and the snapshot's reservations: a reservation on a type
// with several pools is a row over the set of its pools (less what pins
// hold outside their pools, which no option counts); on a type with one
// pool, the pool's reservation.
func (m *goodputMatrix) addReservations(p *ilp.Problem) {
	reserve := func(pool string, n int) {
		if p.Reserved == nil {
			p.Reserved = map[string]int{}
		}
		p.Reserved[pool] += n
	}
	spill := m.pinSpill()
	for _, pl := range slices.Sorted(maps.Keys(spill)) {
		reserve(pl, spill[pl])
	}
	for _, t := range slices.Sorted(maps.Keys(m.Reserved)) {
		r := m.Reserved[t]
		ps, ok := m.Pools[t]
		if !ok || (len(ps) == 1 && ps[0] == t) {
			if p.Reserved == nil {
				p.Reserved = map[string]int{}
			}
			p.Reserved[t] = r
			continue
		}
		total := 0
		for _, name := range ps {
			total += m.Capacity[name] - spill[name]
		}
		p.Quotas = append(p.Quotas, ilp.Quota{Name: "reserved:" + t, AllJobs: true, Types: ps, Limit: max(total-r, 0)})
	}
}

// addOptions sets p's jobs, in order (nil = row order): each row's entries
// neither Dropped nor Dominated (or pinned) as options, except the entries
// spanning pools, returned in spans. optIdx[i][k] is the entry index of
// option k of row i.
func (m *goodputMatrix) addOptions(p *ilp.Problem, order []int) (optIdx [][]int, spans []spanOpt) {
	optIdx = make([][]int, len(m.Rows))
	n := 0
	for i := range m.Rows {
		n += len(m.Rows[i].Entries)
	}
	opts := make([]ilp.Option, 0, n)
	idx := make([]int, 0, n)
	for pos := range m.Rows {
		i := pos
		if order != nil {
			i = order[pos]
		}
		r := &m.Rows[i]
		start := len(opts)
		pin := -1
		for k := range r.Entries {
			e := &r.Entries[k]
			if (e.Dropped || e.Dominated) && k != r.Pin {
				continue
			}
			if e.Config.Spanning() {
				if r.Pin >= 0 && k != r.Pin {
					continue // a pinned job takes its pin only
				}
				spans = append(spans, spanOpt{pos: pos, row: i, entry: k, uses: usesOf(e, k == r.Pin), value: e.Value, pinned: k == r.Pin, current: k == r.Current})
				continue
			}
			if k == r.Pin {
				pin = len(opts) - start
			}
			opts = append(opts, ilp.Option{Type: m.poolName(e.Config), GPUs: e.charge(), Value: e.Value})
			idx = append(idx, k)
		}
		p.Jobs[pos] = ilp.Job{ID: r.Job, Options: opts[start:len(opts):len(opts)], Unallocated: r.Unallocated, Pin: pin}
		optIdx[i] = idx[start:len(idx):len(idx)]
	}
	return optIdx, spans
}

// Problem returns the allocation problem of the matrix in row order, for
// hosts that want to inspect it (ilp.WriteLP) or solve it themselves. Option k
// of job i is the k-th entry of Rows[i] that is neither Dropped nor Dominated
// (pinned entries are always offered), except entries spanning the pools of
// a type (configset.Config.Spanning), which use several capacity rows: Solve
// enumerates those outside the solver, and a job pinned to one has no
// option here.
func (m *goodputMatrix) Problem() *ilp.Problem {
	p, _, _ := m.problem(nil)
	return p
}

// solve solves the allocation problem of the matrix exactly (ilp.Solve) under
// ctx and Options.SolverDeadline. Jobs' current configurations are offered as
// a warm start. With Options.Seed ≠ 0 the jobs are presented to the solver in
// a seeded order (tie-breaking). On a deadline the better of the solver's
// incumbent and a greedy allocation (current configurations that fit, then
// waiting jobs on free GPUs, smallest first) is returned with Status
// StatusFeasible; a ctx already expired skips the solver. Pins that cannot hold together give an
// error wrapping ErrInfeasible that names the type.
func solve(ctx context.Context, m *goodputMatrix, o *Options) (solution, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	order := permutation(len(m.Rows), o.Seed)
	p, optIdx, spans := m.problem(order)
	// Warm start: everybody keeps the current configuration.
	warm := make([]int, len(m.Rows))
	for pos := range warm {
		i := pos
		if order != nil {
			i = order[pos]
		}
		warm[pos] = -1
		if c := m.Rows[i].Current; c >= 0 {
			for k, e := range optIdx[i] {
				if e == c {
					warm[pos] = k
				}
			}
		}
	}
	if o.SolverDeadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.SolverDeadline)
		defer cancel()
	}
	var sol ilp.Solution
	var fixed map[int]*spanOpt
	var err error
	cut := false
	if len(spans) == 0 {
		sol, err = solveOrGreedy(ctx, p, warm, o)
	} else {
		sol, fixed, cut, err = solveSpans(ctx, p, warm, spans, o)
	}
	if err != nil {
		if errors.Is(err, ilp.ErrInfeasible) {
			return solution{Status: StatusInfeasible, Objective: math.NaN(), Bound: math.NaN()},
				&InfeasibleError{Reason: "the pinned jobs (checkpoint-restore, non-preemptible) do not fit together: " + err.Error(), Err: err}
		}
		return solution{}, &InputError{Field: "Matrix", Reason: err.Error(), Err: err}
	}
	if len(sol.Assignment) != len(m.Rows) {
		return solution{}, &InputError{Field: "Matrix", Reason: fmt.Sprintf("solver returned %d assignments for %d jobs", len(sol.Assignment), len(m.Rows))}
	}
	out := solution{Choice: make([]int, len(m.Rows)), Status: statusOf(sol.Status), Objective: sol.Objective, Bound: sol.Bound, spanCut: cut}
	if m.Partial {
		// Optimal only for the truncated matrix, whose bound says nothing
		// about the full problem.
		out.Status = StatusFeasible
		out.Bound = unknownBound(m.Sense)
		out.spanCut = false
	}
	for pos, a := range sol.Assignment {
		i := pos
		if order != nil {
			i = order[pos]
		}
		out.Choice[i] = -1
		if a >= 0 {
			out.Choice[i] = optIdx[i][a]
		}
		if s, ok := fixed[pos]; ok {
			out.Choice[i] = s.entry
		}
	}
	return out, nil
}

// permutation returns a seeded permutation of 0..n-1, or nil for seed 0.
func permutation(n int, seed uint64) []int {
	if seed == 0 {
		return nil
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	s := seed
	for i := n - 1; i > 0; i-- {
		// splitmix64
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		k := int(z % uint64(i+1))
		perm[i], perm[k] = perm[k], perm[i]
	}
	return perm
}
