package siapolicy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia/sim"
)

// TestHybridJobEndToEnd: a small heterogeneous cluster (one A100 and one RTX
// node, 16 GPUs) with the GPT job and four BERT jobs, scheduled by Sia in
// each profiling mode: every job completes, the GPT job holds whole
// pipeline replicas in every round (2 A100s or 8 RTXs each), the run is
// deterministic.
func TestHybridJobEndToEnd(t *testing.T) {
	_, c, tr := traceCluster(t, "a100:1x8,rtx:1x8")
	wl := &sim.Workload{Name: "gpt-small", Jobs: []sim.JobSpec{
		{Name: "gpt-0", App: sim.GPTApp, Submit: 0, Replicas: 1, Batch: 384},
		{Name: "bert-1", App: "bert", Submit: 600, Replicas: 4, Batch: 48},
		{Name: "bert-2", App: "bert", Submit: 1200, Replicas: 4, Batch: 48},
		{Name: "bert-3", App: "bert", Submit: 1800, Replicas: 2, Batch: 24},
		{Name: "bert-4", App: "bert", Submit: 2400, Replicas: 2, Batch: 24},
	}}
	for _, mode := range []bootstrap.Mode{bootstrap.Profiled, bootstrap.Oracle, bootstrap.NoProfiling} {
		t.Run(mode.String(), func(t *testing.T) {
			run := func() *sim.Result {
				p, err := New(c, tr, Options{Mode: mode})
				require.NoError(t, err)
				res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr, LogAllocations: true}, wl, p)
				require.NoError(t, err)
				return res
			}
			res := run()
			for _, j := range res.Jobs {
				assert.True(t, j.Finished(), "%s unfinished", j.Name)
			}
			gptRounds, maxGPUs := 0, 0
			for _, r := range res.Rounds {
				a, ok := r.Allocations["gpt-0"]
				if !ok {
					continue
				}
				gptRounds++
				maxGPUs = max(maxGPUs, a.GPUs())
				stages := map[string]int{"a100": 2, "rtx": 8}[a.Type]
				require.NotZero(t, stages, "type %s", a.Type)
				require.Zero(t, a.GPUs()%stages, "round at %v s: %d GPUs of %s", r.Now, a.GPUs(), a.Type)
			}
			t.Logf("gpt rounds %d max GPUs %d jobs %+v", gptRounds, maxGPUs, res.Jobs[0])
			assert.Greater(t, gptRounds, 10)
			assert.Greater(t, maxGPUs, 2, "the GPT job scales beyond one replica")
			again := run()
			assert.Equal(t, res.Jobs, again.Jobs, "deterministic")
		})
	}
}

// TestHybridRefusedWhenRigidOrArtifactPlacement: the adapter's variants
// that cannot keep whole replicas make sim.Run refuse the GPT job by name.
func TestHybridRefusedWhenRigidOrArtifactPlacement(t *testing.T) {
	_, c, tr := traceCluster(t, "a100:1x8")
	wl := &sim.Workload{Jobs: []sim.JobSpec{{Name: "gpt-3", App: sim.GPTApp, Replicas: 1, Batch: 48}}}
	for _, opt := range []Options{{Rigid: true}, {ArtifactPlacement: true}} {
		p, err := New(c, tr, opt)
		require.NoError(t, err)
		assert.False(t, p.SchedulesHybrid())
		_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr}, wl, p)
		require.ErrorIs(t, err, sim.ErrHybridUnsupported)
		assert.Contains(t, err.Error(), `job "gpt-3"`)
	}
}

// wholeCheck wraps the policy and asserts, in every round, that the GPT
// job's allocation is whole pipelines of one type on whole-pipeline nodes
// (before the engine's own check, so a violation names the round).
type wholeCheck struct {
	*Policy
	t      *testing.T
	rounds *int
}

func (w wholeCheck) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	out, err := w.Policy.Schedule(ctx, s)
	if a, ok := out["gpt-0"]; ok && a.GPUs() > 0 {
		*w.rounds++
		stages := map[string]int{"a100": 2, "rtx": 8}[a.Type]
		require.NotZero(w.t, stages, "t=%v: GPT on %s", s.Now, a.Type)
		for i, n := range a.Shape() {
			require.Zero(w.t, n%stages, "t=%v: node %d of %s holds %d GPUs of the GPT job", s.Now, i, a.Type, n)
		}
	}
	return out, err
}

// TestHybridWholeReplicasRandomWorkloads is a property test over random
// Helios-like workloads (3 seeds, 1 h of arrivals at 30 jobs/h) on the
// heterogeneous cluster with the GPT job submitted at a random time: in
// every round Sia gives it whole pipelines only, and the run completes.
func TestHybridWholeReplicasRandomWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("three 64-GPU simulations")
	}
	_, c, tr := traceCluster(t, "heterogeneous")
	for seed := uint64(1); seed <= 3; seed++ {
		wl, err := sim.Generate(seed, 1, 30)
		require.NoError(t, err)
		submit := float64(seed * 600)
		wl.Jobs = append(wl.Jobs, sim.JobSpec{Name: "gpt-0", App: sim.GPTApp, Submit: submit, Replicas: 1, Batch: 384})
		p, err := New(c, tr, Options{})
		require.NoError(t, err)
		rounds := 0
		res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr, MaxTime: 8 * 3600}, wl, wholeCheck{p, t, &rounds})
		require.NoError(t, err, "seed %d", seed)
		assert.Greater(t, rounds, 30, "seed %d: the GPT job ran", seed)
		assert.NotEmpty(t, res.Jobs)
	}
}
