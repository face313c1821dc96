package gavel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/sia-sched/sia/sia/sim"
)

func modelSetup(t *testing.T, n int) (sim.Cluster, sim.Truth, *sim.Workload) {
	t.Helper()
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(3, 8, 20)
	require.NoError(t, err)
	wl.Jobs = wl.Jobs[:n]
	return c, m, wl
}

// checker wraps the policy and asserts Gavel's invariants every round.
type checker struct {
	*Policy
	t *testing.T
	c sim.Cluster
}

func (k checker) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	out, err := k.Policy.Schedule(ctx, s)
	require.NoError(k.t, err)
	byName := map[string]*sim.Job{}
	for _, j := range s.Jobs {
		byName[j.Name()] = j
	}
	used := map[string]int{}
	for name, a := range out {
		j := byName[name]
		require.NotNil(k.t, j)
		assert.Equal(k.t, j.Spec.Replicas, a.GPUs(), "rigid at the requested count")
		used[a.Type] += a.GPUs()
	}
	for typ, u := range used {
		assert.LessOrEqual(k.t, u, k.c.Capacity(typ))
	}
	// Work conserving: a queued job fits nowhere.
	for _, j := range s.Jobs {
		if _, ok := out[j.Name()]; ok {
			continue
		}
		for _, g := range k.c.Groups {
			assert.Greater(k.t, j.Spec.Replicas, g.Nodes*g.GPUsPerNode-used[g.Type], "job %s left queued with room on %s", j.Name(), g.Type)
		}
	}
	return out, nil
}

func TestGavelInvariantsAndDeterminism(t *testing.T) {
	c, m, wl := modelSetup(t, 60)
	run := func() sim.Summary {
		res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: 360, Rigid: true}, wl, checker{New(c, m, 360), t, c})
		require.NoError(t, err)
		return sim.Summarize([]*sim.Result{res})
	}
	a, b := run(), run()
	assert.Equal(t, 0, a.Unfinished)
	assert.Equal(t, a.JCTs, b.JCTs)
}

func TestGavelTooSmallTypeGetsPlaceholder(t *testing.T) {
	c, err := sim.ParseCluster("t4:1x4,a100:2x8", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	p := New(c, m, 360)
	app, _ := m.App("cifar10")
	j := &sim.Job{Spec: sim.JobSpec{Name: "cifar10-0", App: "cifar10", Replicas: 8, Batch: 2048}, App: app}
	assert.Equal(t, 0.1, p.Throughput(j, "t4"))
	assert.Greater(t, p.Throughput(j, "a100"), 0.1)
}

// TestGavelSaturnPublished checks the engine and baseline against the
// published simulator's Gavel output on saturn workload 1 (1.798 h).
func TestGavelSaturnPublished(t *testing.T) {
	dir := shareddata.Dir(t)
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	tr, err := sim.LoadTrace(dir+"/profiles", c.Types())
	require.NoError(t, err)
	wl, err := sim.LoadWorkload(dir + "/workloads/saturn/workload-1.csv")
	require.NoError(t, err)
	res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr, Round: 360, Rigid: true}, wl, New(c, tr, 360))
	require.NoError(t, err)
	s := sim.Summarize([]*sim.Result{res})
	assert.Equal(t, 0, s.Unfinished)
	assert.InDelta(t, 1.798, s.AvgJCT/3600, 0.02)
}

// BenchmarkGavelDefaultWorkload simulates the generated default workload
// (model ground truth) with Gavel per iteration.
func BenchmarkGavelDefaultWorkload(b *testing.B) {
	c, _ := sim.ParseCluster("heterogeneous", 1)
	m, err := sim.LoadModel()
	require.NoError(b, err)
	wl, err := sim.Generate(1, 8, 20)
	require.NoError(b, err)
	for i := 0; i < b.N; i++ {
		if _, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: 360, Rigid: true}, wl, New(c, m, 360)); err != nil {
			b.Fatal(err)
		}
	}
}
