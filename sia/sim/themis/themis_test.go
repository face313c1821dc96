package themis

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
)

func model(t testing.TB) *sim.ModelTruth {
	m, err := sim.LoadModel()
	require.NoError(t, err)
	return m
}

// randomRound builds a Gavel round of J jobs on C types with random
// throughputs, ages and sizes.
func randomRound(t *testing.T, rng *rand.Rand, m *sim.ModelTruth, J, C int) *gavel.Round {
	r := &gavel.Round{Now: 3600 + rng.Float64()*7200, Length: 360}
	for c := 0; c < C; c++ {
		r.Types = append(r.Types, []string{"t4", "a100", "rtx"}[c])
		r.Capacity = append(r.Capacity, 4+4*rng.IntN(4))
	}
	for i := 0; i < J; i++ {
		app, ok := m.App(sim.AppNames[rng.IntN(len(sim.AppNames))])
		require.True(t, ok)
		j := &sim.Job{Spec: sim.JobSpec{Name: app.Name, App: app.Name, Replicas: 1 + rng.IntN(8), Batch: app.InitBatch * 2, Submit: rng.Float64() * 3000}, App: app}
		r.Jobs = append(r.Jobs, j)
		row := make([]float64, C)
		for c := range row {
			row[c] = 0.5 + rng.Float64()*5
		}
		r.T = append(r.T, row)
	}
	return r
}

func maxRatio(a *Allocator, r *gavel.Round, X [][]float64) float64 {
	w := 0.0
	for i := range r.Jobs {
		w = math.Max(w, a.Ratio(r, X, i))
	}
	return w
}

func checkBase(t *testing.T, r *gavel.Round, X [][]float64) {
	t.Helper()
	require.Len(t, X, len(r.Jobs))
	for c := range r.Types {
		used := 0.0
		for i, j := range r.Jobs {
			used += float64(j.Spec.Replicas) * X[i][c]
		}
		assert.LessOrEqual(t, used, float64(r.Capacity[c])+1e-6, "type %s over capacity", r.Types[c])
	}
	for i := range X {
		s := 0.0
		for _, x := range X[i] {
			assert.GreaterOrEqual(t, x, 0.0)
			s += x
		}
		assert.LessOrEqual(t, s, 1+1e-6, "job %d share", i)
	}
}

// TestAllocateBeatsGrid compares the min-max ratio with an exhaustive grid
// over X (two jobs, two types, step 0.05): no grid point may do better.
func TestAllocateBeatsGrid(t *testing.T) {
	m := model(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for it := 0; it < 20; it++ {
		r := randomRound(t, rng, m, 2, 2)
		a := &Allocator{Truth: m}
		X, err := a.Allocate(context.Background(), r)
		require.NoError(t, err)
		checkBase(t, r, X)
		got := maxRatio(a, r, X)
		best := math.Inf(1)
		const steps = 20
		for a0 := 0; a0 <= steps; a0++ {
			for a1 := 0; a0+a1 <= steps; a1++ {
				for b0 := 0; b0 <= steps; b0++ {
					for b1 := 0; b0+b1 <= steps; b1++ {
						G := [][]float64{{float64(a0) / steps, float64(a1) / steps}, {float64(b0) / steps, float64(b1) / steps}}
						ok := true
						for c := range r.Types {
							if float64(r.Jobs[0].Spec.Replicas)*G[0][c]+float64(r.Jobs[1].Spec.Replicas)*G[1][c] > float64(r.Capacity[c]) {
								ok = false
							}
						}
						if ok {
							best = math.Min(best, maxRatio(a, r, G))
						}
					}
				}
			}
		}
		assert.LessOrEqual(t, got, best*(1+1e-3), "round %d", it)
		assert.Zero(t, a.Fallbacks)
	}
}

// TestAllocateOptimal: on one or more types the ratio is within the
// tolerance of infeasibility (a slightly smaller ratio has no solution),
// and never worse than the isolated allocation.
func TestAllocateOptimal(t *testing.T) {
	m := model(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for it := 0; it < 40; it++ {
		r := randomRound(t, rng, m, 1+rng.IntN(12), 1+rng.IntN(3))
		a := &Allocator{Truth: m}
		X, err := a.Allocate(context.Background(), r)
		require.NoError(t, err)
		checkBase(t, r, X)
		got := maxRatio(a, r, X)
		assert.LessOrEqual(t, got, maxRatio(a, r, isolated(r))*(1+1e-9))
		_, ok := a.feasible(r, a.times(r), got*(1-2e-3), false)
		assert.False(t, ok, "round %d: ratio %v is not the minimum", it, got)
	}
}

// TestThemisRun simulates a generated workload: every job finishes at its
// requested size, and the run is deterministic.
func TestThemisRun(t *testing.T) {
	m := model(t)
	for _, spec := range []string{"heterogeneous", "homogeneous"} {
		c, err := sim.ParseCluster(spec, 1)
		require.NoError(t, err)
		wl, err := sim.Generate(3, 8, 20)
		require.NoError(t, err)
		wl.Jobs = wl.Jobs[:40]
		run := func() *sim.Result {
			pol := New(c, m, 0, nil)
			res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: DefaultRound, Rigid: true, LogAllocations: true}, wl, pol)
			require.NoError(t, err)
			return res
		}
		a, b := run(), run()
		assert.Equal(t, "themis", a.Policy)
		s := sim.Summarize([]*sim.Result{a})
		assert.Equal(t, 0, s.Unfinished, spec)
		assert.Equal(t, s.JCTs, sim.Summarize([]*sim.Result{b}).JCTs, spec)
		req := map[string]int{}
		for _, j := range wl.Jobs {
			req[j.Name] = j.Replicas
		}
		for _, rs := range a.Rounds {
			for name, al := range rs.Allocations {
				require.Equal(t, req[name], al.GPUs(), "%s: %s rigid", spec, name)
			}
		}
	}
}
