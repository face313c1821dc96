package sia

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var leanSeeds = flag.Int("lean.seeds", 40, "scenarios of TestLeanRoundMatchesStandard")

// TestLeanRoundMatchesStandard plays random multi-round scenarios (every
// kind of job, pins, odd node sizes, reservations, quotas) and, at every
// round, compares a round out of time on the lean path (injected clock an
// hour late) with the same round on the standard path: every running
// job's decision is the same (its current allocation and GPUs, Keep, no
// batch size, pinned as before), the plan keeps every constraint (checkPlan:
// capacity less Reserved, quotas, pins, placement rules, bounds;
// checkAdmissible: no excluded type), every waiting job says why, Status is
// not proven and the bound unknown; with no start on either path, the
// objectives are equal. Snapshots whose running jobs would not simply keep
// take the standard path (both occur).
func TestLeanRoundMatchesStandard(t *testing.T) {
	seeds := *leanSeeds
	if testing.Short() {
		seeds = 10
	}
	lean, fallback, starts := 0, 0, 0
	for seed := 0; seed < seeds; seed++ {
		g := newScenarioGen(uint64(seed), seed%3 == 0)
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		opts := Options{RoundTimeout: -1}
		if seed%5 == 4 {
			opts.P, opts.Lambda = 0.5, -1.1
		}
		s, err := New(&opts)
		require.NoError(t, err)
		ls, err := New(&opts)
		require.NoError(t, err)
		ss, err := New(&opts)
		require.NoError(t, err)
		ss.noLean = true
		for round := 0; round < 10; round++ {
			g.step()
			g.snap.Reserved, g.snap.Quotas = nil, nil
			if seed%4 == 1 {
				// At most what the pinned jobs leave (else infeasible).
				room := 0
				for _, n := range g.snap.Nodes {
					if n.Type == "t4" {
						room += n.GPUs
					}
				}
				for i := range g.snap.Jobs {
					if j := &g.snap.Jobs[i]; pinned(j, g.snap.Now) && j.State.Current.Type == "t4" {
						room -= j.State.Current.GPUs
					}
				}
				g.snap.Reserved = map[string]int{"t4": min(1+rng.IntN(3), room)}
			}
			if seed%3 == 2 {
				g.snap.Quotas = leanQuota(rng, &g.snap)
			}
			at := fmt.Sprintf("seed %d round %d", seed, round)
			lp := roundOutOfTime(t, ls, g.snap)
			sp := roundOutOfTime(t, ss, g.snap)
			require.False(t, sp.lean, at)
			checkPlan(t, &g.snap, &lp)
			checkAdmissible(t, &g.snap, &lp)
			if !lp.lean {
				fallback++
			} else {
				lean++
				for i := range g.snap.Jobs {
					j := &g.snap.Jobs[i]
					d := lp.Decisions[i]
					if j.State.Current.Running() {
						assertKeptAsStandard(t, &sp, &lp, i, at)
						continue
					}
					if d.Action == Start {
						starts++
						continue
					}
					assert.NotEqual(t, ReasonNone, d.Reason, "%s: waiting job %s says why", at, j.ID)
				}
				assert.Equal(t, StatusFeasible, lp.Status, at)
				assert.True(t, math.IsInf(lp.Bound, 0), "%s: bound %v of a partial matrix", at, lp.Bound)
				if planStarts(&lp) == 0 && planStarts(&sp) == 0 && keptUnvalued(&g.snap, &sp) {
					assert.InDelta(t, sp.Objective, lp.Objective, 1e-9*math.Max(1, math.Abs(sp.Objective)), at)
				}
			}
			p, err := s.Round(context.Background(), g.snap)
			require.NoError(t, err, at)
			applyPlan(&g.snap, &p, time.Minute)
		}
	}
	t.Logf("%d lean rounds (%d starts), %d on the standard path", lean, starts, fallback)
	assert.Positive(t, lean)
	assert.Positive(t, fallback)
	assert.Positive(t, starts)
}

// assertKeptAsStandard asserts that running job i's decision in the lean
// plan lp is the standard plan sp's: the same in full when sp kept it
// without a prediction too, else the same allocation, GPUs and flags (a
// standard round that builds fewer than ctxCheckJobs rows before looking
// at the clock values them) and no batch size (Decision.LocalBatch).
func assertKeptAsStandard(t *testing.T, sp, lp *Plan, i int, at string) {
	t.Helper()
	want, got := sp.Decisions[i], lp.Decisions[i]
	assert.Equal(t, Keep, got.Action, "%s: running job %s", at, got.Job)
	if e := sp.entry(i); (e == nil || !e.unvalued) && lp.entry(i).unvalued {
		assert.Zero(t, got.LocalBatch+got.AccumSteps+got.GlobalBatch, "%s: job %s kept without a prediction", at, got.Job)
		assert.Zero(t, got.Goodput, "%s: job %s", at, got.Job)
		want.LocalBatch, want.AccumSteps, want.GlobalBatch, want.Goodput = 0, 0, 0, 0
	}
	assert.Equal(t, want, got, "%s: running job %s", at, got.Job)
}

// TestLeanRoundMatchesStandardLarge: on snapshots large enough for the
// standard round out of time to keep every running job without a
// prediction, the lean round's decisions for them are the standard
// path's in full, and its starts keep every constraint.
func TestLeanRoundMatchesStandardLarge(t *testing.T) {
	for _, c := range []struct {
		k, n int
		seed uint64
	}{{8, 600, 3}, {16, 1200, 2}, {32, 3000, 1}} {
		snap := largeSnapshot(t, c.k, c.n, c.seed)
		ls, err := New(nil)
		require.NoError(t, err)
		ss, err := New(nil)
		require.NoError(t, err)
		ss.noLean = true
		lp := roundOutOfTime(t, ls, snap)
		sp := roundOutOfTime(t, ss, snap)
		require.True(t, lp.lean)
		checkPlan(t, &snap, &lp)
		checkAdmissible(t, &snap, &lp)
		at := fmt.Sprintf("%d jobs", c.n)
		starts := 0
		for i := range snap.Jobs {
			if snap.Jobs[i].State.Current.Running() {
				require.NotNil(t, sp.entry(i), at)
				require.True(t, sp.entry(i).unvalued, at)
				assertKeptAsStandard(t, &sp, &lp, i, at)
			} else if lp.Decisions[i].Action == Start {
				starts++
			} else {
				assert.NotEqual(t, ReasonNone, lp.Decisions[i].Reason, at)
			}
		}
		t.Logf("%s: %d started lean, %d standard", at, starts, planStarts(&sp))
		assert.Positive(t, starts, at)
		assert.Equal(t, sp.Status, lp.Status, at)
		assert.InDelta(t, keptObjective(&snap, &sp), keptObjective(&snap, &lp), 1e-9*math.Abs(keptObjective(&snap, &sp)), at)
		assert.True(t, math.IsInf(lp.Bound, 0), "%s: bound %v", at, lp.Bound)
		assert.Equal(t, sp.Bound, lp.Bound, at)
	}
}

// keptUnvalued reports whether plan p kept every running job of snap
// without a prediction.
func keptUnvalued(snap *Snapshot, p *Plan) bool {
	for i := range snap.Jobs {
		if e := p.entry(i); snap.Jobs[i].State.Current.Running() && (e == nil || !e.unvalued) {
			return false
		}
	}
	return true
}

// keptObjective is the part of plan p's objective its running jobs of
// snap make.
func keptObjective(snap *Snapshot, p *Plan) float64 {
	var s float64
	for i := range snap.Jobs {
		if e := p.entry(i); snap.Jobs[i].State.Current.Running() && e != nil {
			s += e.Value
		}
	}
	return s
}

// planStarts counts a plan's starts.
func planStarts(p *Plan) int {
	n := 0
	for _, d := range p.Decisions {
		if d.Action == Start {
			n++
		}
	}
	return n
}

// leanQuota returns a quota over every other job of snap, its limit at
// least what its pinned jobs hold (else the round is infeasible), at
// random above it.
func leanQuota(rng *rand.Rand, snap *Snapshot) []Quota {
	q := Quota{Name: "half", Limit: rng.IntN(12)}
	for i := range snap.Jobs {
		if i%2 == 0 {
			j := &snap.Jobs[i]
			q.Jobs = append(q.Jobs, j.ID)
			if pinned(j, snap.Now) {
				q.Limit += j.State.Current.GPUs
			}
		}
	}
	return []Quota{q}
}

// TestLeanPathChoice: the lean path is taken when the time left to D + S
// is less than the standard floor, and not when time suffices or the
// snapshot is small enough for the standard floor to fit in S; a running
// job that would not simply keep (its type now outside Job.Types, its
// quota now exceeded) sends the round to the standard path, which gives it
// what it always did.
func TestLeanPathChoice(t *testing.T) {
	snap := largeSnapshot(t, 32, 3000, 1)
	o := (*Options)(nil).WithDefaults()
	cl, err := validateSnapshot(&snap, &o, true)
	require.NoError(t, err)
	t0 := time.Now()
	at := func(left, slack time.Duration) *roundClock {
		return &roundClock{now: func() time.Time { return t0 }, deadline: t0.Add(left), slack: slack}
	}
	floor := standardFloor(&snap, cl, &o, time.Millisecond)
	t.Logf("standard floor of %d jobs: %v", len(snap.Jobs), floor)
	ctx := context.Background()
	assert.True(t, takeLean(ctx, at(time.Millisecond, 2*time.Millisecond), &snap, cl, &o), "D = 1 ms")
	assert.True(t, takeLean(ctx, at(-time.Second, 2*time.Millisecond), &snap, cl, &o), "past D")
	assert.False(t, takeLean(ctx, at(time.Second, 100*time.Millisecond), &snap, cl, &o), "D = 1 s")
	assert.False(t, takeLean(ctx, at(floor, time.Millisecond), &snap, cl, &o), "the floor fits")
	assert.False(t, takeLean(ctx, &roundClock{now: time.Now}, &snap, cl, &o), "no deadline")

	small := largeSnapshot(t, 8, 200, 3)
	scl, err := validateSnapshot(&small, &o, true)
	require.NoError(t, err)
	require.Less(t, standardFloor(&small, scl, &o, 0), 2*time.Millisecond)
	assert.False(t, takeLean(ctx, at(0, 2*time.Millisecond), &small, scl, &o), "a small snapshot's floor fits in S")

	s, err := New(nil)
	require.NoError(t, err)
	p := roundOutOfTime(t, s, snap)
	assert.True(t, p.lean, "a round out of time")
	s.now = nil
	p, err = s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.False(t, p.lean, "a round with time")

	// A goodput edit sees every configuration offered: the standard path.
	edits := 0
	es := s.WithGoodputEdit(func(_ *Job, _ Allocation, _ bool, g float64) float64 { edits++; return g })
	es.now = func() time.Time { return time.Now().Add(time.Hour) }
	dctx, dcancel := context.WithTimeout(context.Background(), 0)
	ep, err := es.Round(dctx, snap)
	dcancel()
	require.NoError(t, err)
	assert.False(t, ep.lean, "a round with a goodput edit")
	assert.Positive(t, edits)

	// Waiting worth more than any allocation: every kept entry is
	// dominated, the standard path decides.
	ws, err := New(&Options{Lambda: 1e-9}) // p < 0: minimised, waiting worth 1e-9
	require.NoError(t, err)
	wp := roundOutOfTime(t, ws, snap)
	assert.False(t, wp.lean, "kept entries dominated by waiting")
	checkPlan(t, &snap, &wp)

	// A running job whose type its Types now exclude, and one whose quota
	// is now exceeded: the standard path, which moves or preempts them.
	for _, edit := range []string{"types", "quota"} {
		bad := snap
		bad.Jobs = append([]Job(nil), snap.Jobs...)
		k := -1
		for i := range bad.Jobs {
			if j := &bad.Jobs[i]; j.State.Current.Running() && !pinned(j, bad.Now) {
				k = i
				break
			}
		}
		require.GreaterOrEqual(t, k, 0)
		j := &bad.Jobs[k]
		switch edit {
		case "types":
			for _, ty := range bad.Types() {
				if ty != j.State.Current.Type {
					j.Types = append(j.Types, ty)
				}
			}
		case "quota":
			bad.Quotas = []Quota{{Name: "q", Jobs: []string{j.ID}, Limit: j.State.Current.GPUs - 1}}
		}
		s.now = nil
		p := roundOutOfTime(t, s, bad)
		assert.False(t, p.lean, edit)
		checkPlan(t, &bad, &p)
		checkAdmissible(t, &bad, &p)
		assert.NotEqual(t, Keep, p.Decisions[k].Action, "%s: job %s", edit, j.ID)
	}
}

// TestLeanFloorWork: the lean round asks a running job's Models nothing
// beyond validation's one Model call (no goodput prediction, no row by
// the paper's steps for the common case), a queued job's only when its
// cheap row is built (a few, cheapFirst), and allocates no more than the
// standard path's round out of time.
func TestLeanFloorWork(t *testing.T) {
	snap := largeSnapshot(t, 8, 600, 3)
	calls := make([]atomic.Int64, len(snap.Jobs))
	var evals atomic.Int64
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		j.Models = modelCalls{j.Models, &calls[i]}
		if j.State.Current.Running() {
			j.Models = countedModels{j.Models, &evals}
		}
	}
	o := (*Options)(nil).WithDefaults()
	_, err := validateSnapshot(&snap, &o, true)
	require.NoError(t, err)
	valCalls := make([]int64, len(calls))
	for i := range calls {
		valCalls[i] = calls[i].Swap(0)
	}
	s, err := New(nil)
	require.NoError(t, err)
	p := roundOutOfTime(t, s, snap)
	require.True(t, p.lean)
	assert.Zero(t, evals.Load(), "goodput predictions of running jobs")
	cheap := 0
	for i := range snap.Jobs {
		n := calls[i].Load()
		if snap.Jobs[i].State.Current.Running() {
			assert.Equal(t, valCalls[i], n, "running job %s: validation's Model calls only", snap.Jobs[i].ID)
			continue
		}
		if n > 0 {
			cheap++
		}
	}
	assert.Positive(t, cheap)
	assert.LessOrEqual(t, cheap, cheapExamine*minCheapRows, "queued jobs asked: the cheap rows built")

	if raceEnabled {
		return // the race detector's allocations are counted too
	}
	big := largeSnapshot(t, 32, 3000, 1)
	lean := floorAllocs(t, big, false)
	std := floorAllocs(t, big, true)
	t.Logf("%d jobs: %.0f allocations lean, %.0f standard", len(big.Jobs), lean, std)
	assert.LessOrEqual(t, lean, std)
}

// floorAllocs returns the allocations of a round of snap out of time when
// it starts (expired ctx, clock an hour late), on the standard path when
// noLean is set.
func floorAllocs(t *testing.T, snap Snapshot, noLean bool) float64 {
	s, err := New(nil)
	require.NoError(t, err)
	s.noLean = noLean
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	return testing.AllocsPerRun(3, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		p, err := s.Round(ctx, snap)
		require.NoError(t, err)
		require.Equal(t, !noLean, p.lean)
	})
}
