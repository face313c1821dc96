package sim

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/shareddata"
)

// loadGPT loads the shared profiles for the heterogeneous cluster's types.
func loadGPT(t *testing.T) (*TraceTruth, string) {
	t.Helper()
	dir := shareddata.Path(t, "profiles")
	tr, err := LoadTrace(dir, []string{"t4", "a100", "rtx"})
	require.NoError(t, err)
	return tr, dir
}

// TestGPTTruthMatchesProfileRows: the GPT job's ground truth is the gpt_pmp
// profiles: every measured row with whole pipeline replicas is returned
// exactly by StepTime at micro-batch 1 and 2, the step of a pipeline is
// 3((S−1)+48)·fwd + all-reduce, and Profile turns the rows into pipeline
// observations.
func TestGPTTruthMatchesProfileRows(t *testing.T) {
	tr, dir := loadGPT(t)
	app, ok := tr.App(GPTApp)
	require.True(t, ok)
	assert.True(t, app.Hybrid())
	assert.Equal(t, map[string]int{"a100": 2, "rtx": 8}, app.Stages)
	assert.Equal(t, 48, app.MicroBatches)
	assert.Equal(t, 12, app.InitBatch)
	assert.Equal(t, 384, app.MaxBatch)
	assert.Equal(t, 2, app.MaxEpochs, "BERT's epochs")
	assert.False(t, tr.Supports(GPTApp, "t4"), "gpt_pmp has no T4 profile")
	assert.Equal(t, []string{GPTApp}, tr.HybridApps())

	m, err := bootstrap.ReadModelDir(filepath.Join(dir, "gpt_pmp"))
	require.NoError(t, err)
	rows := 0
	for typ, suffix := range map[string]string{"a100": "dgx-ext", "rtx": "rtx"} {
		tp, ok := m.Type(suffix)
		require.True(t, ok, suffix)
		s := app.Stages[typ]
		check := func(shape []int, local int, step, sync float64) {
			t.Helper()
			if sum(shape)%s != 0 {
				return
			}
			rows++
			fwd, y, ok := tr.StepTime(GPTApp, typ, shape, local)
			require.True(t, ok, "%s %v", typ, shape)
			assert.InDelta(t, step, fwd, 1e-12, "%s %v b=%d", typ, shape, local)
			assert.InDelta(t, sync, y, 1e-12, "%s %v b=%d", typ, shape, local)
			if local == 1 {
				want := 3*float64(s-1+48)*step + sync
				assert.InDelta(t, want, pipelineStep(s, app.MicroBatches, fwd, y), 1e-9)
			}
		}
		for _, r := range tp.Placements {
			check(placementShape(r.Placement), r.LocalBatch, r.StepTime, r.SyncTime)
		}
		for _, r := range tp.Scalability {
			if r.Nodes > 16 {
				continue
			}
			shape := make([]int, r.Nodes)
			for i := range shape {
				shape[i] = r.Replicas / r.Nodes
			}
			check(shape, r.LocalBatch, r.StepTime, r.SyncTime)
		}
		prof := tr.Profile(GPTApp, typ, 0, 0)
		require.NotEmpty(t, prof)
		for _, o := range prof {
			assert.Greater(t, o.StepTime, o.SyncTime, "pipeline observation: micro-batch + all-reduce")
			fwd, y, ok := tr.StepTime(GPTApp, typ, evenShape(o.Nodes, o.Replicas*s), o.LocalBatch)
			require.True(t, ok)
			assert.InDelta(t, fwd+y, o.StepTime, 1e-12)
		}
		seed := tr.SeedProfile(GPTApp, typ)
		require.Len(t, seed, 2, "one replica on one node, micro-batch 1 and 2")
		for _, o := range seed {
			assert.Equal(t, 1, o.Replicas)
			assert.Equal(t, 1, o.Nodes)
		}
		assert.Greater(t, tr.Xput1(GPTApp, typ), 0.0)
	}
	assert.Greater(t, rows, 100)
	// BERT's statistical efficiency: the same gradient statistics.
	for _, b := range []float64{12, 48, 100, 384} {
		for e := 0; e < 2; e++ {
			assert.Equal(t, tr.GradStats("bert", b, e), tr.GradStats(GPTApp, b, e))
		}
	}
}

func evenShape(nodes, gpus int) []int {
	out := make([]int, nodes)
	for i := range out {
		out[i] = gpus / nodes
	}
	return out
}

// TestGPTIsolatedRunMatchesPipelineRule: one GPT job alone on one node (8
// A100s: 4 pipelines, batch 192; 8 RTXs: 1 pipeline, batch 48) finishes at
// the time the pipeline rule gives from the profile: restart delay +
// Σ_epochs progress / (gain/T), T = 3((S−1)+48)·fwd + all-reduce (the RTX
// all-reduce is 2 % of its step, so leaving it out fails the test).
func TestGPTIsolatedRunMatchesPipelineRule(t *testing.T) {
	tr, _ := loadGPT(t)
	app, _ := tr.App(GPTApp)
	for _, tc := range []struct {
		typ               string
		stages, pipelines int
	}{{"a100", 2, 4}, {"rtx", 8, 1}} {
		t.Run(tc.typ, func(t *testing.T) {
			cl := Cluster{Groups: []NodeGroup{{Type: tc.typ, Nodes: 1, GPUsPerNode: 8}}}
			wl := &Workload{Name: "one", Jobs: []JobSpec{{Name: "gpt-0", App: GPTApp, Replicas: 1, Batch: 384}}}
			res, err := Run(context.Background(), Config{Cluster: cl, Truth: tr, Round: 60}, wl, Fixed{GPUs: 8})
			require.NoError(t, err)
			require.Len(t, res.Jobs, 1)
			j := res.Jobs[0]
			require.True(t, j.Finished())
			assert.Equal(t, 0, j.Restarts)

			fwd, sync, ok := tr.StepTime(GPTApp, tc.typ, []int{8}, 1)
			require.True(t, ok)
			iter := 3*float64(tc.stages-1+48)*fwd + sync
			batch := float64(48 * tc.pipelines)
			want := app.RestartDelay + 60 // submitted at 0, first round at 60 s
			for e := 0; e < app.MaxEpochs; e++ {
				rate := goodput.Gain(tr.GradStats(GPTApp, batch, e), 12, batch) / iter / app.Slowdown
				want += (tr.Progress(GPTApp, e+1) - tr.Progress(GPTApp, e)) / rate
			}
			assert.InEpsilon(t, want, j.Completion, 1e-3, "completion %v s, pipeline rule %v s", j.Completion, want)
			assert.InDelta(t, 8*(math.Ceil((j.Completion-60)/60)*60), j.GPUSeconds, 8*60)
		})
	}
}

// noHybrid is a policy that does not declare HybridScheduler.
type noHybrid struct{}

func (noHybrid) Name() string { return "plain" }
func (noHybrid) Schedule(context.Context, *State) (map[string]Alloc, error) {
	return nil, nil
}

// TestRunRejectsHybridJobs: a hybrid job under a policy that cannot
// schedule it, as a rigid or strong-scaling job or in a rigid run is an
// error naming the job, before the first round.
func TestRunRejectsHybridJobs(t *testing.T) {
	tr, _ := loadGPT(t)
	cl := Cluster{Groups: []NodeGroup{{Type: "a100", Nodes: 1, GPUsPerNode: 8}}}
	job := JobSpec{Name: "gpt-7", App: GPTApp, Replicas: 1, Batch: 48}
	tests := []struct {
		name  string
		cat   string
		rigid bool
		pol   Policy
		want  string
		is    error
	}{
		{"policy without HybridScheduler", "", false, noHybrid{}, "policy plain cannot schedule hybrid-parallel job", ErrHybridUnsupported},
		{"rigid category", CategoryRigid, false, Fixed{GPUs: 8}, "must be adaptive", ErrInvalidInput},
		{"scale-gpus category", CategoryStrongScaled, false, Fixed{GPUs: 8}, "must be adaptive", ErrInvalidInput},
		{"rigid run", "", true, Fixed{GPUs: 8}, "cannot run rigid", ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := job
			j.Category = tc.cat
			_, err := Run(context.Background(), Config{Cluster: cl, Truth: tr, Rigid: tc.rigid}, &Workload{Jobs: []JobSpec{j}}, tc.pol)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), `job "gpt-7"`)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// wholeReplicas is the brute-force twin of checkWholeReplicas: every
// replica is S GPUs of the job's type on one node (S ≤ node size) or S GPUs
// in all (larger replicas).
func wholeReplicas(app *App, a Alloc, perNode int) bool {
	s, ok := app.Stages[a.Type]
	if !ok {
		return false
	}
	if s > perNode {
		return len(a.Nodes)%s == 0
	}
	count := map[int]int{}
	for _, n := range a.Nodes {
		count[n]++
	}
	for _, c := range count {
		if c%s != 0 {
			return false
		}
	}
	return true
}

// TestWholeReplicaInvariant is a property test over random rounds: the
// engine's allocation check accepts an allocation of a hybrid job exactly
// when it is whole replicas (the brute-force twin), so no plan that gives a
// fraction of a replica ever runs; the error names the job.
func TestWholeReplicaInvariant(t *testing.T) {
	tr, _ := loadGPT(t)
	app, _ := tr.App(GPTApp)
	cl := Cluster{Groups: []NodeGroup{{Type: "a100", Nodes: 2, GPUsPerNode: 8}, {Type: "rtx", Nodes: 3, GPUsPerNode: 8}, {Type: "t4", Nodes: 2, GPUsPerNode: 4}}}
	job := &Job{Spec: JobSpec{Name: "gpt-0", App: GPTApp, Replicas: 1, Batch: 48}, App: app}
	rng := rand.New(rand.NewPCG(15, 3))
	accepted, rejected := 0, 0
	for round := 0; round < 3000; round++ {
		g := cl.Groups[rng.IntN(len(cl.Groups))]
		var a Alloc
		a.Type = g.Type
		free := make([]int, g.Nodes)
		for i := range free {
			free[i] = g.GPUsPerNode
		}
		// Mostly replica-sized chunks, sometimes a stray GPU.
		chunks := 1 + rng.IntN(4)
		for c := 0; c < chunks; c++ {
			n := rng.IntN(g.Nodes)
			k := app.Stages[g.Type]
			if k == 0 || rng.IntN(4) == 0 {
				k = 1 + rng.IntN(g.GPUsPerNode)
			}
			k = min(k, free[n])
			for i := 0; i < k; i++ {
				a.Nodes = append(a.Nodes, n)
			}
			free[n] -= k
		}
		if len(a.Nodes) == 0 {
			continue
		}
		err := checkAllocs(cl, tr, []*Job{job}, map[string]Alloc{"gpt-0": a})
		if g.Type == "t4" {
			require.Error(t, err, "GPT cannot run on t4")
			rejected++
			continue
		}
		if wholeReplicas(app, a, g.GPUsPerNode) {
			require.NoError(t, err, "round %d: %+v", round, a)
			accepted++
		} else {
			require.Error(t, err, "round %d: %+v is not whole replicas", round, a)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), `job "gpt-0"`)
			assert.True(t, strings.Contains(err.Error(), "replicas"), err.Error())
			rejected++
		}
	}
	assert.Greater(t, accepted, 300)
	assert.Greater(t, rejected, 300)
}

// fractionPolicy gives the GPT job 3 A100s: one and a half replicas.
type fractionPolicy struct{}

func (fractionPolicy) Name() string          { return "fraction" }
func (fractionPolicy) SchedulesHybrid() bool { return true }
func (fractionPolicy) Schedule(_ context.Context, s *State) (map[string]Alloc, error) {
	return map[string]Alloc{s.Jobs[0].Name(): {Type: "a100", Nodes: []int{0, 0, 0}}}, nil
}

// TestRunRejectsFractionOfReplica: a policy's plan with a fraction of a
// pipeline replica stops the run with a PolicyError naming the job.
func TestRunRejectsFractionOfReplica(t *testing.T) {
	tr, _ := loadGPT(t)
	cl := Cluster{Groups: []NodeGroup{{Type: "a100", Nodes: 1, GPUsPerNode: 8}}}
	_, err := Run(context.Background(), Config{Cluster: cl, Truth: tr}, &Workload{Jobs: []JobSpec{{Name: "gpt-1", App: GPTApp, Replicas: 1, Batch: 48}}}, fractionPolicy{})
	require.Error(t, err)
	var pe *PolicyError
	require.True(t, errors.As(err, &pe))
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `job "gpt-1"`)
	assert.Contains(t, err.Error(), "3 GPUs of a100 is not a whole number of replicas of 2 GPUs")
}
