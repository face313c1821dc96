package shockwave

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/simtest"
)

// TestShockwaveRun simulates a generated workload on both clusters: every
// job finishes at its requested size, the run is deterministic, and some
// rounds fall back from the fairness constraints.
func TestShockwaveRun(t *testing.T) {
	m, err := sim.LoadModel()
	require.NoError(t, err)
	for _, spec := range []string{"heterogeneous", "homogeneous"} {
		c, err := sim.ParseCluster(spec, 1)
		require.NoError(t, err)
		wl, err := sim.Generate(3, 8, 20)
		require.NoError(t, err)
		wl.Jobs = wl.Jobs[:20]
		var stats Stats
		run := func() *sim.Result {
			pol := New(c, m, nil)
			res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: DefaultRound, Rigid: true, LogAllocations: true}, wl, pol)
			require.NoError(t, err)
			stats = pol.Stats
			return res
		}
		a := run()
		assert.Equal(t, "shockwave", a.Policy)
		s := sim.Summarize([]*sim.Result{a})
		assert.Equal(t, 0, s.Unfinished, spec)
		if spec == "heterogeneous" {
			assert.Equal(t, s.JCTs, sim.Summarize([]*sim.Result{run()}).JCTs, "same input, same output")
		}
		req := map[string]int{}
		for _, j := range wl.Jobs {
			req[j.Name] = j.Replicas
		}
		for _, rs := range a.Rounds {
			for name, al := range rs.Allocations {
				require.Equal(t, req[name], al.GPUs(), "%s: %s rigid", spec, name)
			}
		}
		assert.Positive(t, stats.Plans)
		t.Logf("%s: %+v, avg JCT %.3f h", spec, stats, s.AvgJCT/3600)
	}
}

// TestScheduleRandomStates: on random snapshots of several clusters every
// answer fits the cluster (sim.CheckAllocations), gives each job exactly
// its requested GPUs or none (the planner is checked against brute force in planner_test.go).
func TestScheduleRandomStates(t *testing.T) {
	m, err := sim.LoadModel()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, spec := range []string{"heterogeneous", "homogeneous", "t4:2x4,a100:1x8"} {
		c, err := sim.ParseCluster(spec, 1)
		require.NoError(t, err)
		for it := 0; it < 8; it++ {
			s, err := simtest.RandomState(rng, c, m, &simtest.Options{Jobs: 1 + rng.IntN(30)})
			require.NoError(t, err)
			pol := New(c, m, nil)
			out, err := pol.Schedule(context.Background(), s)
			require.NoError(t, err)
			require.NoError(t, sim.CheckAllocations(s, m, out), "%s #%d", spec, it)
			used := 0
			for _, j := range s.Jobs {
				if a, ok := out[j.Name()]; ok {
					require.Equal(t, j.Spec.Replicas, a.GPUs(), "%s #%d: %s", spec, it, j.Name())
					used += a.GPUs()
				}
			}
			assert.LessOrEqual(t, used, c.TotalGPUs())
		}
	}
}

// TestFTSeriesAverage: the finish-time objective is 0.9 × the mean of the
// earlier estimates (weighted by the rounds each one held) + 0.1 × the
// newest, not an exponential average.
func TestFTSeriesAverage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rounds []float64
		ests   []float64
		want   float64
	}{
		{"one estimate", []float64{3}, []float64{100}, 100},
		{"two", []float64{1, 2}, []float64{100, 200}, 0.9*100 + 0.1*200},
		{"three", []float64{1, 2, 3}, []float64{100, 200, 300}, 0.9*150 + 0.1*300},
		// An exponential average would give 0.9·(0.9·100+0.1·200)+0.1·300 = 129.
		{"windows", []float64{1, 4, 5}, []float64{100, 200, 300}, 0.9*(100*3+200*1)/4 + 0.1*300},
	} {
		var f ftSeries
		for i := range tc.rounds {
			f.add(tc.rounds[i], tc.ests[i])
		}
		assert.InDelta(t, tc.want, f.average(), 1e-9, tc.name)
	}
}

// TestReweightProjectsFromNow: a job that has run since it arrived (its
// estimate never grew, so FT_j equals it) keeps weight 1 in the fallback;
// one whose estimate grew while it waited gets ratio^λ, and ratio^100 when
// it can finish within a round.
func TestReweightProjectsFromNow(t *testing.T) {
	m, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("homogeneous", 1)
	require.NoError(t, err)
	pol := New(c, m, nil)
	const L = 60.0
	s := &sim.State{Now: 10 * L, Round: L, Cluster: c}
	prob := &Problem{Rounds: 5, GPUs: c.TotalGPUs(), Round: L}
	// Job a: estimate 1000 s in every round; job b: waited, estimate grew
	// by L a round from 1000 s; job c: 30 s left, earlier estimates 400 s.
	names := []string{"a", "b", "c"}
	rems := []float64{1000 - 10*L, 1000, 30}
	for i, n := range names {
		s.Jobs = append(s.Jobs, &sim.Job{Spec: sim.JobSpec{Name: n}})
		prob.Jobs = append(prob.Jobs, PlanJob{GPUs: 4, Total: rems[i], IterTime: 1, Weight: 1, MaxRemaining: 1})
		fs := &ftSeries{}
		for r := 0.0; r <= 10; r++ {
			switch {
			case n == "a":
				fs.add(r, 1000)
			case n == "c":
				fs.add(r, map[bool]float64{true: 10*L + 30, false: 400}[r == 10])
			default:
				fs.add(r, 1000+r*L)
			}
		}
		pol.ft[n] = fs
	}
	prio := pol.reweight(s, s.Jobs, prob, []float64{0, 0, 0})
	assert.Equal(t, 1.0, prio[0], "a job on schedule keeps weight 1")
	ftB := pol.ft["b"].average()
	assert.InDelta(t, math.Pow((10*L+1000)/ftB, 12), prio[1], 1e-9)
	ratioC := (10*L + 30) / (0.9*400 + 0.1*(10*L+30))
	assert.Greater(t, math.Pow(ratioC, 100), maxWeight)
	assert.Equal(t, maxWeight, prio[2], "ratio^100, capped")
	for _, j := range prob.Jobs {
		assert.True(t, math.IsInf(j.MaxRemaining, 1), "fairness bounds dropped")
	}
}
