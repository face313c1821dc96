package ilp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomQuotaProblem is a valid problem of up to 12 jobs on up to 4 types
// under up to 8 quotas of every kind (listed or over every job; one type,
// a set of types or every type; with and without MinGPUs), and a random
// assignment of it (not always feasible).
func randomQuotaProblem(rng *rand.Rand) (*Problem, []int) {
	types := []string{"a", "b", "c", "d"}[:1+rng.IntN(4)]
	p := &Problem{Sense: Maximize, Capacity: map[string]int{}, Reserved: map[string]int{}}
	for _, t := range types {
		p.Capacity[t] = rng.IntN(12)
		p.Reserved[t] = rng.IntN(p.Capacity[t] + 1)
	}
	n := rng.IntN(13)
	assign := make([]int, n)
	for i := range n {
		j := Job{ID: fmt.Sprint("j", i), Pin: -1}
		for range rng.IntN(5) {
			j.Options = append(j.Options, Option{Type: types[rng.IntN(len(types))], GPUs: 1 + rng.IntN(6), Value: rng.Float64()})
		}
		assign[i] = rng.IntN(len(j.Options)+1) - 1
		p.Jobs = append(p.Jobs, j)
	}
	for range rng.IntN(9) {
		q := Quota{MinGPUs: rng.IntN(3) * rng.IntN(5), Limit: rng.IntN(14)}
		switch rng.IntN(3) {
		case 0:
			q.Type = types[rng.IntN(len(types))]
		case 1:
			for _, k := range rng.Perm(len(types))[:1+rng.IntN(len(types))] {
				q.Types = append(q.Types, types[k])
			}
		}
		if rng.IntN(2) == 0 {
			q.AllJobs = true
		} else {
			q.Jobs = rng.Perm(n)[:rng.IntN(n+1)]
		}
		p.Quotas = append(p.Quotas, q)
	}
	return p, assign
}

// TestLateIndexTwin: the late path's quota index against the naive twin
// (every quota tested with Quota.Counts for every job it covers): the rows
// each option enters (fits and take), each row's usage by a whole
// assignment, and feasible against Check, on 3,000 random problems.
func TestLateIndexTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 77))
	for it := range 3000 {
		p, assign := randomQuotaProblem(rng)
		require.NoError(t, p.Validate(), "it %d", it)
		none := make([]int, len(p.Jobs))
		for i := range none {
			none[i] = -1
		}
		rows := newLateRows(p, none)
		// the usage by the quotas' own lists, before the per-job lists
		byQuota := rows.usage(p, len(assign), func(i int) int { return assign[i] })
		feasibleByQuota := feasible(p, assign, rows)
		require.True(t, rows.lists(p, nil))
		for i := range rows.left {
			rows.left[i] = 0
		}
		// the naive usage of each row
		nt := len(rows.typeRow)
		want := make([]int, nt+len(p.Quotas))
		covers := func(qi, ji int) bool {
			q := &p.Quotas[qi]
			if q.AllJobs {
				return true
			}
			for _, x := range q.Jobs {
				if x == ji {
					return true
				}
			}
			return false
		}
		for i, k := range assign {
			if k < 0 {
				continue
			}
			o := p.Jobs[i].Options[k]
			want[rows.typeRow[o.Type]] += o.GPUs
			for qi := range p.Quotas {
				if covers(qi, i) && p.Quotas[qi].Counts(o) {
					want[nt+qi] += o.GPUs
				}
			}
			// take enters exactly the rows the option counts toward
			before := append([]int(nil), rows.left...)
			rows.take(p, i, o)
			for r := range before {
				d := before[r] - rows.left[r]
				enters := r == rows.typeRow[o.Type] || r >= nt && covers(r-nt, i) && p.Quotas[r-nt].Counts(o)
				if enters {
					assert.Equal(t, o.GPUs, d, "it %d: job %d option %d row %d", it, i, k, r)
				} else {
					assert.Zero(t, d, "it %d: job %d option %d row %d", it, i, k, r)
				}
			}
			// fits: the option fits exactly when every row it enters has room
			for r := range rows.left {
				rows.left[r] = rng.IntN(8)
			}
			fit := o.GPUs <= rows.left[rows.typeRow[o.Type]]
			for qi := range p.Quotas {
				if covers(qi, i) && p.Quotas[qi].Counts(o) && o.GPUs > rows.left[nt+qi] {
					fit = false
				}
			}
			got, work := rows.fits(p, i, o)
			assert.Equal(t, fit, got, "it %d: fits of job %d option %d", it, i, k)
			assert.LessOrEqual(t, work, 1+len(p.Quotas))
			copy(rows.left, before)
			rows.take(p, i, o)
		}
		got := rows.usage(p, len(assign), func(i int) int { return assign[i] })
		assert.Equal(t, want, got, "it %d: usage", it)
		assert.Equal(t, want, byQuota, "it %d: usage by the quotas' lists", it)
		assert.Equal(t, p.Check(assign) == nil, feasibleByQuota, "it %d: feasible by the quotas' lists", it)
		assert.Equal(t, p.Check(assign) == nil, feasible(p, assign, rows), "it %d: feasible against Check (%v)", it, p.Check(assign))
	}
}

// TestLateIndexCost: on 2,000 jobs under 4,000 quotas over every job, the
// index and a whole assignment's usage do work linear in the input, not
// jobs × quotas (that was 8·10^6 quota tests, 45 ms past a deadline): a
// few allocations, and each option enters only its prefix of the quotas.
func TestLateIndexCost(t *testing.T) {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": 4000, "b": 4000}}
	for i := range 2000 {
		p.Jobs = append(p.Jobs, Job{ID: fmt.Sprint("j", i), Pin: -1, Options: []Option{{Type: "a", GPUs: 1 + i%4, Value: 1}, {Type: "b", GPUs: 2, Value: 1}}})
	}
	for k := range 4000 {
		p.Quotas = append(p.Quotas, Quota{AllJobs: true, Type: []string{"a", "b"}[k%2], MinGPUs: k % 5, Limit: 3000 + k})
	}
	assign := make([]int, len(p.Jobs))
	for i := range assign {
		assign[i] = -1
		if i%3 == 0 {
			assign[i] = 1
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rows := newLateRows(p, assign)
	require.True(t, feasible(p, assign, rows))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.Mallocs-before.Mallocs, uint64(40))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64*(len(p.Jobs)+len(p.Quotas))), "bytes: linear in jobs + quotas")
	ok, work := rows.fits(p, 0, p.Jobs[0].Options[0]) // 1 GPU of a: the 800 quotas of a with MinGPUs <= 1
	assert.True(t, ok)
	assert.Equal(t, 1+800, work)
}

// quotaRows is n jobs of two 1-3 GPU options under q quotas over every
// job (each option enters about half of them).
func quotaRows(n, q int) *Problem {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": 2 * n, "b": 2 * n}}
	for i := range n {
		p.Jobs = append(p.Jobs, Job{ID: fmt.Sprint("j", i), Pin: -1, Options: []Option{
			{Type: "a", GPUs: 1 + i%3, Value: float64(i%7) + 1}, {Type: "b", GPUs: 2, Value: float64(i%5) + 0.5}}})
	}
	for k := range q {
		p.Quotas = append(p.Quotas, Quota{AllJobs: true, Type: []string{"a", "b"}[k%2], MinGPUs: k % 3, Limit: 3*n/2 + k})
	}
	return p
}

// TestGreedyPacedByRows: past greedyEnd the search's greedy incumbent
// quickGreedy does at most about greedyMinRows units of
// options × rows before they look at the clock, not greedyMinJobs jobs
// whatever their rows: under 4,000 quotas over every job, 64 jobs entered
// 250,000 rows (1.5-3.5 ms past a 20 ms deadline in each pass). Without a
// clock it considers every job.
func TestGreedyPacedByRows(t *testing.T) {
	p := quotaRows(600, 4000)
	sc, err := p.validate(nil, nil)
	require.NoError(t, err)
	m := buildModel(p, sc, nil)
	lam := make([]float64, m.nrows)
	free := m.allJobs()
	perJob := 0 // the pace's cost of a job
	var g greedyPace
	g.over(nil, &m.jobs[0])
	perJob = g.work
	require.Greater(t, perJob, 2000)
	bound := 2*(greedyMinRows/perJob+1) + 2 // two passes admit (the ordered jobs, then upgrades)
	all := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
	require.Greater(t, admittedCount(all.quickGreedy(free, m.cap, lam, nil)), 4*greedyMinJobs)
	late := newSearch(lateClock(), m, &Settings{})
	// (marginalGreedy's last two passes are paced the same way; its first,
	// up the jobs' chains, runs only before the deadline, on the clock's
	// ticks)
	for name, greedy := range map[string]func(sr *search) []int{
		"quickGreedy": func(sr *search) []int { return sr.quickGreedy(free, m.cap, lam, nil) },
	} {
		assert.LessOrEqual(t, admittedCount(greedy(late)), bound, "%s: jobs admitted past greedyEnd (a job costs %d units)", name, perJob)
	}
}

// TestPinsOnQuotasTwin: the pins' usage of every quota (checkPins, by the
// quota index) against the naive twin (every quota over the pinned jobs it
// covers), on 3,000 random problems.
func TestPinsOnQuotasTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 88))
	for it := range 3000 {
		p, assign := randomQuotaProblem(rng)
		for i := range p.Jobs {
			if rng.IntN(2) == 0 {
				p.Jobs[i].Pin = assign[i]
			}
		}
		want := make([]int, len(p.Quotas))
		for qi := range p.Quotas {
			q := &p.Quotas[qi]
			for _, ji := range q.members(len(p.Jobs)) {
				if j := &p.Jobs[ji]; j.Pin >= 0 && q.Counts(j.Options[j.Pin]) {
					want[qi] += j.Options[j.Pin].GPUs
				}
			}
		}
		if len(p.Quotas) == 0 {
			want = nil
		}
		assert.Equal(t, want, pinsOnQuotas(p), "it %d", it)
	}
}

// TestReserveAssembly: a search that starts before its deadline ends
// assemblyNanos per job before it (at most a quarter of the allowance),
// leaving the time that building the Solution takes; a deadline already
// past, or none, is kept.
func TestReserveAssembly(t *testing.T) {
	start := time.Now()
	clk := newClock(context.Background(), start, time.Second)
	dl := clk.deadline
	clk.reserveAssembly(5000)
	assert.Equal(t, dl.Add(-5000*assemblyNanos), clk.deadline, "5,000 jobs")
	clk = newClock(context.Background(), start, time.Second)
	clk.reserveAssembly(10_000_000)
	assert.Equal(t, dl.Add(-Slack(time.Second)/4), clk.deadline, "capped at a quarter of the allowance")
	clk = lateClock()
	dl = clk.deadline
	clk.reserveAssembly(5000)
	assert.Equal(t, dl, clk.deadline, "a deadline already past")
	clk = newClock(context.Background(), start, 0)
	clk.reserveAssembly(5000)
	assert.True(t, clk.deadline.IsZero(), "no deadline")
}

// TestAdmitLateProperty: on 3,000 random problems with random warm starts
// (feasible or not), with and without a clock past its end, the late
// admission returns a feasible assignment that holds the pins, keeps every
// profitable warm option of a feasible warm start, and reports the profit
// it adds.
func TestAdmitLateProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 99))
	for it := range 3000 {
		p, warm := randomQuotaProblem(rng)
		for i := range p.Jobs {
			if rng.IntN(4) == 0 && warm[i] >= 0 {
				p.Jobs[i].Pin = warm[i]
			}
		}
		if p.Validate() != nil {
			continue // pins over a capacity or quota
		}
		feasibleWarm := p.Check(warm) == nil
		for _, clk := range []*clock{nil, lateClock()} {
			assign := make([]int, len(p.Jobs))
			for i, j := range p.Jobs {
				assign[i] = j.Pin
			}
			before := p.Objective(assign)
			gain, err := admitLate(p, assign, 0, warm, len(p.Jobs), clk, nil)
			require.NoError(t, err)
			require.NoError(t, p.Check(assign), "it %d", it)
			assert.InDelta(t, p.Objective(assign)-before, gain, 1e-9, "it %d: the profit added", it)
			if feasibleWarm {
				for i, j := range p.Jobs {
					if k := warm[i]; k >= 0 && j.Options[k].Value > j.Unallocated {
						assert.Equal(t, k, assign[i], "it %d: job %d keeps its warm option", it, i)
					}
				}
			}
		}
	}
}
