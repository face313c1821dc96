package siapolicy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

type rigidCheck struct {
	*Policy
	t *testing.T
}

func (r rigidCheck) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	out, err := r.Policy.Schedule(ctx, s)
	for _, j := range s.Jobs {
		if a, ok := out[j.Name()]; ok {
			assert.Equal(r.t, j.Spec.Replicas, a.GPUs(), j.Name())
		}
	}
	return out, err
}

func TestSiaModesShortRun(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(2, 1, 20)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"sia", Options{}},
		{"sia-oracle", Options{Mode: bootstrap.Oracle}},
		{"sia-noprof", Options{Mode: bootstrap.NoProfiling}},
		{"sia-rigid", Options{Rigid: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() sim.Summary {
				p, err := New(c, m, tc.opt)
				require.NoError(t, err)
				assert.Equal(t, tc.name, p.Name())
				var pol sim.Policy = p
				if tc.opt.Rigid {
					pol = rigidCheck{p, t}
				}
				res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Rigid: tc.opt.Rigid}, wl, pol)
				require.NoError(t, err)
				return sim.Summarize([]*sim.Result{res})
			}
			a, b := run(), run()
			assert.Equal(t, 0, a.Unfinished)
			assert.Equal(t, a.JCTs, b.JCTs, "deterministic")
		})
	}
}

// TestSiaSaturnWorkload1 runs Sia on saturn workload 1 with the trace
// ground truth (published simulator: 0.586 h; the bound for the
// five-workload mean is 0.82 h).
func TestSiaSaturnWorkload1(t *testing.T) {
	dir, c, tr := traceCluster(t, "heterogeneous")
	wl, err := sim.LoadWorkload(dir + "/workloads/saturn/workload-1.csv")
	require.NoError(t, err)
	p, err := New(c, tr, Options{})
	require.NoError(t, err)
	res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr}, wl, p)
	require.NoError(t, err)
	s := sim.Summarize([]*sim.Result{res})
	assert.Equal(t, 0, s.Unfinished)
	assert.Less(t, s.AvgJCT/3600, 0.82)
}

// BenchmarkSaturnWorkload1 simulates one whole saturn workload (160 jobs,
// 64 GPUs, trace ground truth) with Sia per iteration.
func BenchmarkSaturnWorkload1(b *testing.B) {
	dir, c, tr := traceCluster(b, "heterogeneous")
	wl, err := sim.LoadWorkload(dir + "/workloads/saturn/workload-1.csv")
	require.NoError(b, err)
	for i := 0; i < b.N; i++ {
		p, err := New(c, tr, Options{})
		require.NoError(b, err)
		if _, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr}, wl, p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSchedulerOfRoundShape: a modified Sia is any Rounder; with the
// default scheduler behind it, the run is the same as without.
func TestSchedulerOfRoundShape(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	wl, err := sim.Generate(3, 1, 10)
	require.NoError(t, err)
	base, err := New(c, truth, Options{})
	require.NoError(t, err)
	want, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: truth}, wl, base)
	require.NoError(t, err)

	inner, err := sia.New(&sia.Options{Artifact: sia.PublishedArtifact()})
	require.NoError(t, err)
	rounds := 0
	wrapped, err := New(c, truth, Options{Name: "sia-logged", Scheduler: RounderFunc(func(ctx context.Context, snap sia.Snapshot) (sia.Plan, error) {
		rounds++
		return inner.Round(ctx, snap)
	})})
	require.NoError(t, err)
	assert.Equal(t, "sia-logged", wrapped.Name())
	got, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: truth}, wl, wrapped)
	require.NoError(t, err)
	assert.Equal(t, len(got.Rounds), rounds)
	require.Len(t, got.Jobs, len(want.Jobs))
	for i := range want.Jobs {
		assert.Equal(t, want.Jobs[i].JCT, got.Jobs[i].JCT, want.Jobs[i].Name)
	}
}

// TestWaitReasons: the simulator's per-job results carry sia's queue
// reasons: a rigid job larger than the cluster waits as too-large in every
// round, and every waiting round of the others is explained.
func TestWaitReasons(t *testing.T) {
	c, err := sim.NewCluster(sim.NodeGroup{Type: "t4", Nodes: 1, GPUsPerNode: 4})
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl := &sim.Workload{Name: "w", Jobs: []sim.JobSpec{
		{Name: "big", App: "cifar10", Submit: 0, Replicas: 8, Batch: 128},
		{Name: "a", App: "cifar10", Submit: 0, Replicas: 4, Batch: 128},
		{Name: "b", App: "cifar10", Submit: 0, Replicas: 4, Batch: 128},
	}}
	p, err := New(c, m, Options{Rigid: true})
	require.NoError(t, err)
	res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Rigid: true, MaxTime: 6 * 3600}, wl, p)
	require.NoError(t, err)
	byName := map[string]sim.JobResult{}
	for _, j := range res.Jobs {
		byName[j.Name] = j
	}
	big := byName["big"]
	require.False(t, big.Finished())
	assert.Equal(t, []string{sia.ReasonTooLarge.String()}, keys(big.WaitReasons))
	assert.Equal(t, len(res.Rounds), big.WaitReasons[sia.ReasonTooLarge.String()], "too large in every round")
	// a and b cannot run together: one of them waits, for a reason.
	waited := 0
	for _, n := range []string{"a", "b"} {
		for _, k := range byName[n].WaitReasons {
			waited += k
		}
	}
	assert.Positive(t, waited)
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// traceCluster returns the shared data folder, the cluster of spec and the
// trace ground truth of its types (skipping when the data is absent).
func traceCluster(tb testing.TB, spec string) (string, sim.Cluster, *sim.TraceTruth) {
	tb.Helper()
	dir := shareddata.Dir(tb)
	c, err := sim.ParseCluster(spec, 1)
	require.NoError(tb, err)
	tr, err := sim.LoadTrace(dir+"/profiles", c.Types())
	require.NoError(tb, err)
	return dir, c, tr
}
