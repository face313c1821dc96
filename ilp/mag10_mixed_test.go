package ilp_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// TestMag10MixedMagnitudesCost: on problems of mixed magnitudes (one type
// counted in units of 10^6+3 or 2^40, the others in GPUs, and a quota over
// every type on half of them: TestProbe9MixedMagnitudes' draws, then
// cliffBase9's larger ones), a solve without a deadline, and one with a
// node limit and a warm start, allocate within 3× (+64 KiB) of the same
// problem in small counts (the quota's limit k·u + r becomes k + r), and the
// exact solve is Optimal at the brute force's optimum. Before, the dual's
// cutting-plane method worked on multipliers 10^12 times smaller than the
// other rows' and ran its master program ~100 times: 7.5 MB on a 6-job
// problem whose twin takes 49 KB. The nodes are logged, not bounded: the
// core program (coreDP) refuses capacities above 65,535 units, and 4 of
// these problems take 2-11 nodes where their twins take one.
func TestMag10MixedMagnitudesCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	var maxBytes uint64
	maxNodes, solves := 0, 0
	for it := 0; it < 160; it++ {
		p := ilptest.Small(rng, 7, rng.IntN(2) == 0)
		ta := "a"
		if it >= 120 {
			p, ta = cliffBase9(rng, true), "t0"
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
				if q.Jobs[i].Options[k].Type == ta {
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
		if it < 120 {
			want, _, _ := ilptest.BruteForce(q)
			warm = dropSome7(q, want, rng, 2)
		}
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
				if it < 120 {
					_, opt, _ := ilptest.BruteForce(q)
					_, noise, _ := twinCompare7(q)
					require.InDelta(t, opt, sq.Objective, noise+1e-9, "it %d", it)
				}
			}
			assert.LessOrEqual(t, bq, 3*bp+64<<10, "it %d s%d ×%d: bytes allocated against the small twin's", it, si, u)
			t.Logf("it %3d s%d ×%-13d jobs %2d nodes %3d / %3d bytes %9d / %9d", it, si, u, len(p.Jobs), sq.Nodes, sp.Nodes, bq, bp)
			maxBytes = max(maxBytes, bq)
			maxNodes = max(maxNodes, sq.Nodes)
			solves++
		}
	}
	t.Logf("%d solves, max nodes %d, max bytes %d", solves, maxNodes, maxBytes)
	assert.Greater(t, solves, 150)
}
