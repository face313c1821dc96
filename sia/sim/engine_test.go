package sim

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func toyWorkload(jobs ...JobSpec) *Workload {
	for i := range jobs {
		if jobs[i].App == "" {
			jobs[i].App = "toy"
		}
		if jobs[i].Replicas == 0 {
			jobs[i].Replicas = 1
		}
		if jobs[i].Batch == 0 {
			jobs[i].Batch = 10
		}
	}
	return &Workload{Name: "toy", Jobs: jobs}
}

func runToy(t *testing.T, pol Policy, wl *Workload) *Result {
	t.Helper()
	res, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}, Round: 60, Rigid: true}, wl, pol)
	require.NoError(t, err)
	return res
}

func TestEngineRestartDelayAndCompletion(t *testing.T) {
	// One job on one GPU from its first round (t = 60): 30 s restore, then
	// 1 progress/s until 200 → completes at 60 + 30 + 200 = 290.
	pol := scripted(func(now float64, jobs []*Job) map[string]Alloc {
		return map[string]Alloc{"j": {Type: "a", Nodes: []int{0}}}
	})
	res := runToy(t, pol, toyWorkload(JobSpec{Name: "j"}))
	require.Len(t, res.Jobs, 1)
	j := res.Jobs[0]
	assert.InDelta(t, 290, j.Completion, 1e-9)
	assert.InDelta(t, 290, j.JCT, 1e-9)
	assert.Equal(t, 0, j.Restarts)
	// Charged every round the job holds GPUs: decisions at 60, 120, 180, 240.
	assert.InDelta(t, 4*60, j.GPUSeconds, 1e-9)
}

func TestEngineRestartRules(t *testing.T) {
	tests := []struct {
		name     string
		second   Alloc // allocation from t = 120 on
		restarts int
		jct      float64
	}{
		// Same shape on other node ids of the same type: free.
		{"move same shape", Alloc{Type: "a", Nodes: []int{1}}, 0, 290},
		// Another type: one restart, another 30 s restore.
		{"migrate type", Alloc{Type: "b", Nodes: []int{0}}, 1, 320},
		// Same type, another shape (2 GPUs, same per-GPU speed here): restart.
		{"resize", Alloc{Type: "a", Nodes: []int{0, 0}}, 1, 320},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := scripted(func(now float64, jobs []*Job) map[string]Alloc {
				if now < 120 {
					return map[string]Alloc{"j": {Type: "a", Nodes: []int{0}}}
				}
				return map[string]Alloc{"j": tc.second}
			})
			res := runToy(t, pol, toyWorkload(JobSpec{Name: "j", Batch: 10}))
			assert.Equal(t, tc.restarts, res.Jobs[0].Restarts)
			assert.InDelta(t, tc.jct, res.Jobs[0].JCT, 1e-9)
		})
	}
}

func TestEngineSuspendResumeCountsRestart(t *testing.T) {
	// Runs in round [60,120), suspended in [120,180), resumes at 180.
	pol := scripted(func(now float64, jobs []*Job) map[string]Alloc {
		if now == 120 {
			return nil
		}
		return map[string]Alloc{"j": {Type: "a", Nodes: []int{0}}}
	})
	res := runToy(t, pol, toyWorkload(JobSpec{Name: "j"}))
	// progress 30 by t=120; resume at 180 with 30 s restore → 210; 170 more → 380.
	assert.Equal(t, 1, res.Jobs[0].Restarts)
	assert.InDelta(t, 380, res.Jobs[0].JCT, 1e-9)
}

func TestEngineFirstScheduledAtRoundBoundary(t *testing.T) {
	pol := scripted(func(now float64, jobs []*Job) map[string]Alloc {
		out := map[string]Alloc{}
		for _, j := range jobs {
			out[j.Name()] = Alloc{Type: "a", Nodes: []int{0}}
		}
		return out
	})
	// Submitted at 61 → first decision at 120, completes at 120+30+200.
	res := runToy(t, pol, toyWorkload(JobSpec{Name: "j", Submit: 61}))
	assert.InDelta(t, 350, res.Jobs[0].Completion, 1e-9)
	assert.InDelta(t, 350-61, res.Jobs[0].JCT, 1e-9)
}

func TestEngineRejectsBadAllocations(t *testing.T) {
	tests := []struct {
		name  string
		alloc map[string]Alloc
	}{
		{"unknown type", map[string]Alloc{"j": {Type: "zz", Nodes: []int{0}}}},
		{"node out of range", map[string]Alloc{"j": {Type: "a", Nodes: []int{2}}}},
		{"node over capacity", map[string]Alloc{"j": {Type: "a", Nodes: []int{0, 0, 0, 0, 0}}}},
		{"inactive job", map[string]Alloc{"ghost": {Type: "a", Nodes: []int{0}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := scripted(func(float64, []*Job) map[string]Alloc { return tc.alloc })
			_, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}, Round: 60}, toyWorkload(JobSpec{Name: "j"}), pol)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalidInput), err.Error())
		})
	}
}

func TestEngineUnknownApplication(t *testing.T) {
	_, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}}, toyWorkload(JobSpec{Name: "x", App: "nope", Line: 3}), Fixed{GPUs: 1})
	require.Error(t, err)
	var ie *InputError
	require.True(t, errors.As(err, &ie))
	assert.Equal(t, "x", ie.Job)
	assert.Equal(t, 3, ie.Line)
}

func TestEngineMaxTimeLeavesUnfinished(t *testing.T) {
	res, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}, Round: 60, MaxTime: 120}, toyWorkload(JobSpec{Name: "j"}), scripted(func(float64, []*Job) map[string]Alloc { return nil }))
	require.NoError(t, err)
	s := Summarize([]*Result{res})
	assert.Equal(t, 1, s.Unfinished)
	assert.Equal(t, -1.0, res.Jobs[0].JCT)
}

func TestP99Index(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 0}, {99, 98}, {100, 99}, {101, 99}, {160, 158}, {800, 792}} {
		assert.Equal(t, tc.want, P99Index(tc.n), "n=%d", tc.n)
	}
}

func TestSummarizeDefinitions(t *testing.T) {
	r1 := &Result{Policy: "p", Jobs: []JobResult{
		{Name: "a", Submit: 0, Completion: 100, JCT: 100, Restarts: 1, GPUSeconds: 3600},
		{Name: "b", Submit: 50, Completion: 350, JCT: 300, Restarts: 3, GPUSeconds: 7200},
	}}
	r2 := &Result{Policy: "p", Jobs: []JobResult{{Name: "c", Submit: 10, Completion: 210, JCT: 200, GPUSeconds: 0}}}
	s := Summarize([]*Result{r1, r2})
	assert.Equal(t, 3, s.Jobs)
	assert.InDelta(t, 200, s.AvgJCT, 1e-9)
	assert.InDelta(t, 300, s.P99JCT, 1e-9)               // sorted [100 200 300][floor(2.97)=2]
	assert.InDelta(t, (350.0+200.0)/2, s.Makespan, 1e-9) // per-workload max(sub+JCT) − min(sub), averaged
	assert.InDelta(t, 1.0, s.GPUHoursPerJob, 1e-9)
	assert.InDelta(t, 4.0/3, s.RestartsPerJob, 1e-9)
}

func TestAllocShape(t *testing.T) {
	assert.Equal(t, []int{4, 2}, Alloc{Nodes: []int{0, 0, 0, 0, 1, 1}}.Shape())
	assert.Equal(t, []int{1, 1, 1}, Alloc{Nodes: []int{0, 1, 0}}.Shape())
	assert.Nil(t, Alloc{}.Shape())
	// More nodes than profiled for the type: respread over the limit.
	assert.Equal(t, []int{3, 3, 2}, lookupShape(Alloc{Type: "rtx", Nodes: []int{0, 0, 1, 1, 2, 2, 3, 3}}))
}

func TestEngineStopsWhenNothingCanRun(t *testing.T) {
	// A policy that never allocates: the run ends after stallRounds idle
	// rounds instead of MaxTime, with the job unfinished.
	res, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}, Round: 60}, toyWorkload(JobSpec{Name: "j", Submit: 30}), scripted(func(float64, []*Job) map[string]Alloc { return nil }))
	require.NoError(t, err)
	assert.Equal(t, -1.0, res.Jobs[0].JCT)
	assert.InDelta(t, 60*stallRounds, res.End, 60)
}

// TestRunBoundsConfig: every Run ends in a bounded number of rounds; a
// round length, time limit or submission time out of range is an error
// naming the field instead of a hang or a negative makespan.
func TestRunBoundsConfig(t *testing.T) {
	never := scripted(func(float64, []*Job) map[string]Alloc { return nil })
	tests := []struct {
		name  string
		cfg   Config
		wl    *Workload
		field string
	}{
		{"1ns round", Config{Round: 1e-9}, toyWorkload(JobSpec{Name: "j"}), "Round"},
		{"negative round", Config{Round: -60}, toyWorkload(JobSpec{Name: "j"}), "Round"},
		{"NaN round", Config{Round: math.NaN()}, toyWorkload(JobSpec{Name: "j"}), "Round"},
		{"infinite round", Config{Round: math.Inf(1)}, toyWorkload(JobSpec{Name: "j"}), "Round"},
		{"round over a day", Config{Round: 86401}, toyWorkload(JobSpec{Name: "j"}), "Round"},
		{"NaN max time", Config{MaxTime: math.NaN()}, toyWorkload(JobSpec{Name: "j"}), "MaxTime"},
		{"negative max time", Config{MaxTime: -1}, toyWorkload(JobSpec{Name: "j"}), "MaxTime"},
		{"infinite max time", Config{MaxTime: math.Inf(1)}, toyWorkload(JobSpec{Name: "j"}), "MaxTime"},
		{"too many rounds", Config{Round: 1, MaxTime: 2 * MaxRounds}, toyWorkload(JobSpec{Name: "j"}), "MaxTime"},
		{"submit 1e308", Config{}, toyWorkload(JobSpec{Name: "j", Submit: 1e308}), "Jobs[0].Submit"},
		{"submit after max time", Config{MaxTime: 600}, toyWorkload(JobSpec{Name: "j", Submit: 600}), "time"},
		{"NaN submit", Config{}, toyWorkload(JobSpec{Name: "j", Submit: math.NaN()}), "Jobs[0].Submit"},
		{"duplicate job", Config{}, toyWorkload(JobSpec{Name: "j"}, JobSpec{Name: "j"}), "Jobs[1].Name"},
		{"nil workload", Config{}, nil, "Workload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Cluster, cfg.Truth = toyCluster, toyTruth{}
			_, err := Run(context.Background(), cfg, tc.wl, never)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Equal(t, tc.field, ie.Field, err.Error())
		})
	}
	_, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}}, toyWorkload(JobSpec{Name: "j"}), nil)
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// TestSummarizeFiniteAtTheBounds: the latest submission time the reader
// accepts gives a finite, non-negative makespan.
func TestSummarizeFiniteAtTheBounds(t *testing.T) {
	never := scripted(func(float64, []*Job) map[string]Alloc { return nil })
	res, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}, Round: 3600, MaxTime: MaxSubmit + 7200},
		toyWorkload(JobSpec{Name: "j", Submit: MaxSubmit}), never)
	require.NoError(t, err)
	s := Summarize([]*Result{res})
	assert.Equal(t, 1, s.Unfinished)
	assert.GreaterOrEqual(t, s.Makespan, 0.0)
	assert.False(t, math.IsInf(s.Makespan, 0) || math.IsNaN(s.Makespan))
}

func TestRunRecordsStartAllocationsAndPolicyErrors(t *testing.T) {
	// The job waits one round, then runs from t = 120.
	pol := scripted(func(now float64, jobs []*Job) map[string]Alloc {
		if now < 120 {
			return nil
		}
		return map[string]Alloc{"j": {Type: "a", Nodes: []int{0, 0}}}
	})
	s, err := New(toyCluster, toyTruth{}, &Options{Rigid: true, LogAllocations: true})
	require.NoError(t, err)
	res, err := s.Run(context.Background(), toyWorkload(JobSpec{Name: "j"}), pol)
	require.NoError(t, err)
	assert.Equal(t, 120.0, res.Jobs[0].Start)
	assert.True(t, res.Jobs[0].Finished())
	require.GreaterOrEqual(t, len(res.Rounds), 2)
	assert.Empty(t, res.Rounds[0].Allocations)
	assert.Equal(t, map[string]Alloc{"j": {Type: "a", Nodes: []int{0, 0}}}, res.Rounds[1].Allocations)
	assert.InDelta(t, res.Jobs[0].GPUSeconds/3600, res.Jobs[0].GPUHours(), 1e-12)

	never, err := Run(context.Background(), Config{Cluster: toyCluster, Truth: toyTruth{}}, toyWorkload(JobSpec{Name: "j"}), scripted(func(float64, []*Job) map[string]Alloc { return nil }))
	require.NoError(t, err)
	assert.Equal(t, -1.0, never.Jobs[0].Start)
	assert.Nil(t, never.Rounds[0].Allocations, "not logged by default")

	bad := scripted(func(float64, []*Job) map[string]Alloc { return map[string]Alloc{"j": {Type: "a", Nodes: []int{9}}} })
	_, err = s.Run(context.Background(), toyWorkload(JobSpec{Name: "j"}), bad)
	var pe *PolicyError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "scripted", pe.Policy)
	assert.Equal(t, 60.0, pe.Now)
	assert.ErrorIs(t, err, ErrInvalidInput)
}

func TestNewValidatesOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Cluster
		opt   *Options
		field string
	}{
		{"empty cluster", Cluster{}, nil, "Cluster"},
		{"zero nodes", Cluster{Groups: []NodeGroup{{Type: "a", Nodes: 0, GPUsPerNode: 4}}}, nil, "Cluster.Groups[0].Nodes"},
		{"duplicate type", Cluster{Groups: []NodeGroup{{Type: "a", Nodes: 1, GPUsPerNode: 4}, {Type: "a", Nodes: 1, GPUsPerNode: 4}}}, nil, "Cluster.Groups[1].Type"},
		{"huge node", Cluster{Groups: []NodeGroup{{Type: "a", Nodes: 1, GPUsPerNode: MaxGPUsPerNode + 1}}}, nil, "Cluster.Groups[0].GPUsPerNode"},
		{"short round", toyCluster, &Options{Round: 0.5}, "Round"},
		{"NaN max time", toyCluster, &Options{MaxTime: math.NaN()}, "MaxTime"},
		{"bad batch mode", toyCluster, &Options{Batch: 7}, "Batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.c, toyTruth{}, tc.opt)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.field, ie.Field)
		})
	}
	s, err := New(toyCluster, toyTruth{}, nil)
	require.NoError(t, err)
	assert.Equal(t, float64(DefaultRound), s.Config().Round)
	assert.Equal(t, float64(DefaultMaxTime), s.Config().MaxTime)
	_, err = New(toyCluster, nil, nil)
	assert.ErrorIs(t, err, ErrInvalidInput)
}

func TestParseClusterBoundsSize(t *testing.T) {
	_, err := ParseCluster("a:65536x1024", 1)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "Cluster", ie.Field)
	_, err = ParseCluster("a:1024x1024", 1)
	require.NoError(t, err, "exactly MaxClusterGPUs")
	_, err = ParseCluster("a:1024x1024,b:1x1", 1)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = ParseCluster("t4:6x4", 1024)
	require.NoError(t, err)
}

// explained is a scripted policy that also says why the jobs it leaves out
// wait.
type explained struct {
	scripted
	why map[string]string
}

func (e explained) WaitReasons() map[string]string { return e.why }

func TestEngineRecordsWaitReasons(t *testing.T) {
	// "j" runs from its first round; "w" waits until "j" finishes (at 290,
	// so rounds at 60 … 240 are its four waiting rounds) and then runs.
	pol := explained{
		scripted: func(now float64, jobs []*Job) map[string]Alloc {
			out := map[string]Alloc{}
			for _, j := range jobs {
				if j.Spec.Name == "j" || len(jobs) == 1 {
					out[j.Spec.Name] = Alloc{Type: "a", Nodes: []int{0}}
				}
			}
			return out
		},
		// A reason for a job that runs is ignored.
		why: map[string]string{"w": "quota", "j": "ignored"},
	}
	res := runToy(t, pol, toyWorkload(JobSpec{Name: "j"}, JobSpec{Name: "w"}))
	require.Len(t, res.Jobs, 2)
	assert.Nil(t, res.Jobs[0].WaitReasons, "a job that never waited has no reasons")
	assert.Equal(t, map[string]int{"quota": 4}, res.Jobs[1].WaitReasons)
	// A policy without explanations leaves the field nil.
	res = runToy(t, pol.scripted, toyWorkload(JobSpec{Name: "j"}, JobSpec{Name: "w"}))
	assert.Nil(t, res.Jobs[1].WaitReasons)
}
