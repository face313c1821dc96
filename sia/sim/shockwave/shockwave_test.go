package shockwave

import (
	"context"
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
