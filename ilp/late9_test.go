package ilp

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanLateShares: whatever the deadline and the number of jobs, the
// steps after a deadline end in order (validation, build, the root's
// dual, the greedy incumbents), the build early enough for the search's
// setup before the dual's end, and the greedy incumbents early enough for
// the tail that follows them, all within the late budget: the rest of
// the allowance (half, or two thirds up to schedMargin) is the scheduler's (the
// contract is judged on the wall clock). Before, the greedy incumbents ended at half the allowance
// whatever followed them, and the corpus's 20 ms solves used up to 1.6 ms
// of their 2 ms on the solving thread's CPU.
func TestPlanLateShares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, d := range []time.Duration{-time.Second, 0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond, time.Second} {
		for _, n := range []int{0, 1, 1000, 5000, 100000} {
			ctx, cancel := context.WithDeadline(context.Background(), t0.Add(d))
			c := newClock(ctx, t0, 0)
			c.planLate(n)
			cancel()
			at := t0.Add(max(d, 0))
			slack := Slack(max(d, 0))
			late := lateWorkBudget(slack)
			tail := min(time.Duration(lateTailNanos*n), late/2)
			name := fmt.Sprintf("D %v, %d jobs", d, n)
			assert.False(t, c.validateEnd.Before(at), "%s: validation ends before D", name)
			assert.False(t, c.dualEnd.Before(c.validateEnd), "%s: dual before validation", name)
			assert.False(t, c.greedyEnd.Before(c.dualEnd), "%s: greedy before the dual", name)
			assert.False(t, c.dualEnd.Before(c.buildEnd.Add(min(time.Duration(searchSetupNanos*n), c.greedyEnd.Sub(at)/4))), "%s: no room for the search's setup", name)
			assert.LessOrEqual(t, c.greedyEnd.Add(tail).Sub(at), late, "%s: the greedy incumbents and the tail past the late budget", name)
			assert.GreaterOrEqual(t, slack-late, max(slack/2, min(slack-slack/3, schedMargin)), "%s: the scheduler's margin", name)
			assert.Greater(t, c.greedyEnd.Sub(at), time.Duration(0), "%s: no time for the greedy incumbents", name)
		}
	}
}

// manyRows is a valid problem of n jobs under q quotas over every job
// (types, MinGPUs and limits mixed) and q/4 listed quotas with Types:
// more coupling rows than indexRows.
func manyRows(n, q int, rng *rand.Rand) *Problem {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": 2 * n, "b": n, "c": n / 2}}
	types := []string{"a", "b", "c"}
	for i := range n {
		j := Job{ID: fmt.Sprint("j", i), Pin: -1}
		for k := range 1 + rng.IntN(5) {
			j.Options = append(j.Options, Option{Type: types[rng.IntN(3)], GPUs: 1 + rng.IntN(6), Value: float64(1+rng.IntN(40)) / 4 * float64(k+1)})
		}
		p.Jobs = append(p.Jobs, j)
	}
	for k := range q {
		qt := Quota{AllJobs: true, MinGPUs: rng.IntN(5), Limit: rng.IntN(n)}
		if k%3 != 0 {
			qt.Type = types[k%3]
		}
		p.Quotas = append(p.Quotas, qt)
	}
	for range q / 4 {
		qt := Quota{Types: []string{"a", "c"}, MinGPUs: rng.IntN(3), Limit: rng.IntN(n)}
		for i := range n {
			if rng.IntN(3) == 0 {
				qt.Jobs = append(qt.Jobs, i)
			}
		}
		p.Quotas = append(p.Quotas, qt)
	}
	return p
}

// TestFeasibleByIndexTwin: on a model of more than indexRows rows the
// search checks a choice through the quota index (fitsByIndex); it agrees
// with the check over each option's rows on random choices, feasible and
// not, and so does the capacity the late admission is given.
func TestFeasibleByIndexTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for c := range 20 {
		p := manyRows(60+rng.IntN(60), 80+rng.IntN(60), rng)
		require.NoError(t, p.Validate())
		m := newModel(p)
		require.Greater(t, m.nrows, indexRows)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		fits := 0
		for range 50 {
			choice := make([]int, len(m.jobs))
			density := rng.IntN(4)
			for i := range choice {
				choice[i] = -1
				if len(m.jobs[i].opts) > 0 && rng.IntN(4) < density {
					choice[i] = rng.IntN(len(m.jobs[i].opts))
				}
			}
			byRows, done := sr.feasibleByRows(choice, math.MaxInt)
			require.True(t, done)
			require.Equal(t, byRows, m.fitsByIndex(choice), "case %d: the two checks differ on %v", c, choice)
			require.Equal(t, byRows, sr.feasible(choice), "case %d", c)
			if byRows {
				fits++
			}
			left := append([]int(nil), m.cap...)
			for i, k := range choice {
				if k >= 0 {
					apply(left, &m.jobs[i], k, 1)
				}
			}
			use := m.choiceUsage(choice)
			for r := range left {
				require.Equal(t, left[r], m.cap[r]-use[r], "case %d, row %d", c, r)
			}
		}
		require.Positive(t, fits, "case %d: no feasible choice drawn", c)
	}
}

// TestDualLooksByWork: an evaluation of the dual looks at its stop
// function by the work done, not every 128 jobs: under 1,000 quotas over
// every job each job prices hundreds of rows, and the first look comes
// after the first job. Before, 127 jobs were evaluated before the first
// look (under 4,000 such quotas on 2,000 jobs, the root's dual ended
// 1.2-2.1 ms after its end).
func TestDualLooksByWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	p := manyRows(300, 1000, rng)
	for i := range p.Quotas {
		p.Quotas[i].Limit = 10 * len(p.Jobs) // none binds: λ = 0 gives each job its best option
		if p.Quotas[i].AllJobs {
			p.Quotas[i].MinGPUs = 0 // every option of a type enters its type's ~330 and the ~330 untyped
		}
	}
	m := newModel(p)
	jobs := m.allJobs()
	lam := make([]float64, m.nrows)
	sg := make([]float64, m.nrows)
	looks := 0
	_, ok := m.dualUntil(jobs, m.cap, lam, sg, func() bool { looks++; return true })
	require.False(t, ok, "the stop function stopped the evaluation")
	require.Equal(t, 1, looks)
	// the GPUs used on the type rows: those of the jobs evaluated
	used, most := 0, 0
	for r := range m.types {
		used += m.cap[r] - int(sg[r])
	}
	for _, ji := range jobs[:1] {
		top := 0
		for _, o := range m.jobs[ji].opts {
			top = max(top, o.g)
		}
		most += top
	}
	assert.LessOrEqual(t, used, most, "more than the first job was evaluated before the first look")
}

// TestProfitOrderTwin: profitOrder yields quickGreedy's entries in the
// order of a sort by decreasing profit, ties broken by index (the order
// quickGreedy sorted them in before), however many it is asked for: on
// random entries with many ties, zeros of both signs, infinities and NaN.
func TestProfitOrderTwin(t *testing.T) {
	byProfit := func(a, b profitEntry) int { return cmp.Or(cmp.Compare(b.h, a.h), a.k-b.k) }
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	rng := rand.New(rand.NewPCG(5, 5))
	for c := range 400 {
		n := rng.IntN(300)
		if c%50 == 0 {
			n = 5000
		}
		es := make([]profitEntry, n)
		for i := range es {
			es[i] = profitEntry{i, float64(rng.IntN(1+rng.IntN(50))) - 10}
			if rng.IntN(20) == 0 {
				es[i].h = special[rng.IntN(len(special))]
			}
		}
		rng.Shuffle(n, func(a, b int) { es[a], es[b] = es[b], es[a] })
		want := slices.Clone(es)
		slices.SortFunc(want, byProfit)
		take := n
		if c%2 == 1 {
			take = rng.IntN(n + 1) // a pass stopped by its clock
		}
		var order profitOrder
		for _, e := range es {
			order.push(e)
		}
		got := make([]profitEntry, 0, n)
		for range take {
			e, ok := order.next()
			require.True(t, ok, "case %d: entry %d of %d", c, len(got), n)
			got = append(got, e)
		}
		require.Len(t, got, take)
		for i := range got { // NaN != NaN: compare by the order
			require.Zero(t, byProfit(want[i], got[i]), "case %d: entry %d of %d: %v, want %v", c, i, n, got[i], want[i])
		}
		if take == n {
			_, ok := order.next()
			assert.False(t, ok, "case %d: an entry past the last", c)
		}
	}
}
