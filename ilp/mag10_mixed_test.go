package ilp_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// TestMag10MixedMagnitudesCost: on problems of mixed magnitudes, a solve
// without a deadline, and one with a node limit (and a warm start on the
// small ones), allocates within 3× (+64 KiB, +8 KiB per extra node) of
// the same problem in small counts, and the exact solve is Optimal (at the brute force's optimum on
// the small ones). The draws: one type counted in units of 10^6+3 or
// 2^40, the others in GPUs, with a quota over every type on half of them
// (TestProbe9MixedMagnitudes' draws, then cliffBase9's larger ones); then,
// on one type row, the options of the even jobs in those units beside
// the others' single GPUs. Before, the dual's cutting-plane method worked
// on multipliers 10^12 times smaller than the other rows' (7.5 MB in its
// master programs on a 6-job problem whose twin takes 49 KB), and the
// knapsack programs of one mixed row built tables of millions of cells
// (53-192 MB on 17-25 jobs whose twins take 62-172 KB). The nodes are
// logged, not bounded: the core program (coreDP) refuses capacities above
// 65,535 units, and a few of these problems take 2-48 nodes where their
// twins take one.
// mixedDraw10 is one problem of TestMag10MixedMagnitudesCost's draws.
type mixedDraw10 struct {
	it, u    int
	q, small *ilp.Problem
	warm     []int
	brute    bool // small enough for the brute force
}

// mixedDraws10 returns TestMag10MixedMagnitudesCost's problems.
func mixedDraws10() []mixedDraw10 {
	var out []mixedDraw10
	rng := rand.New(rand.NewPCG(9, 2))
	for it := 0; it < 240; it++ {
		p := ilptest.Small(rng, 7, rng.IntN(2) == 0)
		ta := "a"
		if it >= 120 {
			p, ta = cliffBase9(rng, true), "t0"
		}
		if it >= 160 {
			// on one row: the type's options of the even jobs in units of
			// u, the others in GPUs
			p, ta = cliffBase9(rng, it%4 < 2), "t0"
			if it%4 >= 2 {
				ta = "a"
			}
		}
		if len(p.Capacity) < 2 || p.Validate() != nil {
			continue
		}
		u := []int{1_000_003, 1 << 40}[it%2]
		q := cloneProblem7(p)
		q.Capacity[ta] *= u
		q.Reserved[ta] *= u
		for i := range q.Jobs {
			for k := range q.Jobs[i].Options {
				if q.Jobs[i].Options[k].Type == ta && (it < 160 || i%2 == 0) {
					q.Jobs[i].Options[k].GPUs *= u
				}
			}
		}
		small := cloneProblem7(p)
		if rng.IntN(2) == 0 {
			k, r := rng.IntN(3), rng.IntN(9)
			q.Quotas = append(q.Quotas, ilp.Quota{Name: "mixed", AllJobs: true, Limit: k*u + r})
			small.Quotas = append(small.Quotas, ilp.Quota{Name: "mixed", AllJobs: true, Limit: k + r})
		}
		if q.Validate() != nil || small.Validate() != nil {
			continue
		}
		var warm []int
		brute := it < 120 || it >= 160 && it%4 >= 2
		if brute {
			want, _, _ := ilptest.BruteForce(q)
			warm = dropSome7(q, want, rng, 2)
		}
		out = append(out, mixedDraw10{it, u, q, small, warm, brute})
	}
	return out
}

func TestMag10MixedMagnitudesCost(t *testing.T) {
	var maxBytes uint64
	maxNodes, solves := 0, 0
	for _, d := range mixedDraws10() {
		it, u, q, small, warm, brute := d.it, d.u, d.q, d.small, d.warm, d.brute
		for si, s := range []*ilp.Settings{nil, {MaxNodes: 1, WarmStart: warm}} {
			var sp, sq ilp.Solution
			var err error
			bp := allocated9(func() { sp, err = ilp.Solve(context.Background(), small, s) })
			require.NoError(t, err)
			bq := allocated9(func() { sq, err = ilp.Solve(context.Background(), q, s) })
			require.NoError(t, err)
			require.NoError(t, q.Check(sq.Assignment))
			if s == nil {
				require.Equal(t, ilp.Optimal, sq.Status, "it %d", it)
				if brute {
					_, opt, _ := ilptest.BruteForce(q)
					_, noise, _ := twinCompare7(q)
					require.InDelta(t, opt, sq.Objective, noise+1e-9, "it %d", it)
				}
			}
			// (the extra nodes, see above, allocate a few KiB each)
			allowed := 3*bp + 64<<10 + 8<<10*uint64(max(sq.Nodes-sp.Nodes, 0))
			assert.LessOrEqual(t, bq, allowed, "it %d s%d ×%d: bytes allocated against the small twin's", it, si, u)
			t.Logf("it %3d s%d ×%-13d jobs %2d nodes %3d / %3d bytes %9d / %9d", it, si, u, len(q.Jobs), sq.Nodes, sp.Nodes, bq, bp)
			if s == nil {
				// out of time: feasible, and its bound holds
				sl, err := ilp.Solve(context.Background(), q, &ilp.Settings{TimeLimit: time.Millisecond, WarmStart: warm})
				require.NoError(t, err, "it %d", it)
				require.NoError(t, q.Check(sl.Assignment), "it %d", it)
				_, noise, better := twinCompare7(q)
				assert.False(t, better(sq.Objective, sl.Bound, noise), "it %d: bound %v beaten by the optimum %v", it, sl.Bound, sq.Objective)
			}
			maxBytes = max(maxBytes, bq)
			maxNodes = max(maxNodes, sq.Nodes)
			solves++
		}
	}
	t.Logf("%d solves, max nodes %d, max bytes %d", solves, maxNodes, maxBytes)
	assert.Greater(t, solves, 150)
}

// BenchmarkMixedMagnitudes solves TestMag10MixedMagnitudesCost's problems
// without a deadline (all of them per op), and reports their nodes per op.
func BenchmarkMixedMagnitudes(b *testing.B) {
	draws := mixedDraws10()
	b.ReportAllocs()
	b.ResetTimer()
	nodes := 0
	for n := 0; n < b.N; n++ {
		for _, d := range draws {
			sol, err := ilp.Solve(context.Background(), d.q, nil)
			if err != nil || sol.Status != ilp.Optimal {
				b.Fatal(err, sol.Status)
			}
			nodes += sol.Nodes
		}
	}
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
}
