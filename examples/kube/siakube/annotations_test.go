package siakube

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validAnn() map[string]string {
	return map[string]string{
		AnnKind: "adaptive", AnnMinGPUs: "1", AnnMaxGPUs: "16",
		AnnInitBatch: "128", AnnMaxBatch: "4096",
		AnnLimits:  "a100=32-1024,t4=32-256",
		AnnProfile: `[{"type":"a100","localBatch":64,"stepTime":0.05,"syncTime":0},{"type":"t4","localBatch":64,"stepTime":0.2,"syncTime":0}]`,
	}
}

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestParseJobSpecValid(t *testing.T) {
	s, err := ParseJobSpec(with(validAnn(), AnnRestartCost, "90s", AnnNonPreemptible, "true", AnnPodGPUs, "1"))
	require.NoError(t, err)
	assert.Equal(t, sia.Adaptive, s.Kind)
	assert.Equal(t, 1, s.MinGPUs)
	assert.Equal(t, 16, s.MaxGPUs)
	assert.True(t, s.NonPreemptible)
	assert.Equal(t, 90*time.Second, s.RestartCost)
	assert.Equal(t, PodPerGPU, s.Layout)
	assert.Equal(t, []string{"a100", "t4"}, s.Types())
	assert.Equal(t, goodput.Limits{MinLocalBatch: 32, MaxLocalBatch: 1024}, s.Model.Limits["a100"])
	assert.Zero(t, s.Model.FixedBatch, "adaptive")
	require.Len(t, s.Profile, 2)

	r, err := ParseJobSpec(with(validAnn(), AnnKind, "rigid", AnnGPUs, "12", AnnMinGPUs, "<delete>", AnnMaxGPUs, "<delete>"))
	require.NoError(t, err)
	assert.Equal(t, sia.Rigid, r.Kind)
	assert.Equal(t, 12, r.GPUs)
	assert.Equal(t, r.Model.MaxBatch, r.Model.FixedBatch, "rigid without batch: fixed at max-batch")

	r, err = ParseJobSpec(with(validAnn(), AnnKind, "strong-scaling", AnnBatch, "512"))
	require.NoError(t, err)
	assert.Equal(t, 512, r.Model.FixedBatch, "the batch annotation is the fixed batch")
	assert.Equal(t, 4096, r.Model.MaxBatch)
	_, err = ParseJobSpec(with(validAnn(), AnnBatch, "512"))
	assert.ErrorIs(t, err, ErrAnnotation, "an adaptive job has no fixed batch")

	tr, err := NewTracker(&s)
	require.NoError(t, err)
	assert.Equal(t, []string{"a100", "t4"}, tr.Types())
	assert.Len(t, tr.Observations("a100"), 1)
}

func TestParseJobSpecErrors(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	cases := []struct {
		name, key, val, want string
	}{
		{"unknown kind", AnnKind, "elastic", AnnKind},
		{"min not a number", AnnMinGPUs, "two", AnnMinGPUs},
		{"huge count", AnnMaxGPUs, "99999999999999999999", AnnMaxGPUs},
		{"negative count", AnnMinGPUs, "-3", AnnMinGPUs},
		{"min above max", AnnMinGPUs, "32", AnnMinGPUs},
		{"rigid count on adaptive", AnnGPUs, "4", AnnGPUs},
		{"bad bool", AnnNonPreemptible, "yes", AnnNonPreemptible},
		{"no init batch", AnnInitBatch, "<delete>", AnnInitBatch},
		{"init batch NaN", AnnInitBatch, "NaN", AnnInitBatch},
		{"max below init", AnnMaxBatch, "64", AnnLimits},
		{"no limits", AnnLimits, "<delete>", AnnLimits},
		{"limits garbage", AnnLimits, "a100", AnnLimits},
		{"limits reversed", AnnLimits, "a100=64-32", AnnLimits},
		{"limits bad type", AnnLimits, "a 100=1-2", AnnLimits},
		{"limits duplicate", AnnLimits, "a100=1-2,a100=1-4", AnnLimits},
		{"1 MB limits", AnnLimits, huge, AnnLimits},
		{"1 MB application", AnnApplication, huge, AnnApplication},
		{"1 MB profile", AnnProfile, huge, AnnProfile},
		{"profile not JSON", AnnProfile, "{", AnnProfile},
		{"profile unknown field", AnnProfile, `[{"type":"a100","localBatch":64,"stepTime":1,"syncTime":0,"x":1}]`, AnnProfile},
		{"profile unknown type", AnnProfile, `[{"type":"v100","localBatch":64,"stepTime":1,"syncTime":0}]`, AnnProfile},
		{"profile batch out of limits", AnnProfile, `[{"type":"a100","localBatch":4096,"stepTime":1,"syncTime":0}]`, AnnProfile},
		{"profile huge time", AnnProfile, `[{"type":"a100","localBatch":64,"stepTime":1e300,"syncTime":0}]`, AnnProfile},
		{"profile overflow", AnnProfile, `[{"type":"a100","localBatch":64,"stepTime":1e400,"syncTime":0}]`, AnnProfile},
		{"profile sync ≥ step", AnnProfile, `[{"type":"a100","localBatch":64,"stepTime":1,"syncTime":1}]`, AnnProfile},
		{"profile trailing", AnnProfile, `[] []`, AnnProfile},
		{"bad duration", AnnRestartCost, "soon", AnnRestartCost},
		{"huge duration", AnnRestoreDelay, "10000h", AnnRestoreDelay},
		{"bad layout", AnnPodGPUs, "2", AnnPodGPUs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseJobSpec(with(validAnn(), c.key, c.val))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrAnnotation)
			assert.Contains(t, err.Error(), c.want)
			assert.Less(t, len(err.Error()), 2048, "errors quote at most a prefix of the value")
		})
	}
	_, err := ParseJobSpec(with(validAnn(), AnnKind, "rigid", AnnMinGPUs, "<delete>", AnnMaxGPUs, "<delete>"))
	assert.ErrorContains(t, err, AnnGPUs, "a rigid job needs its count")
}

func TestParseMeasurement(t *testing.T) {
	m, err := ParseMeasurement("ns/a", `{"job":"ns/a","type":"a100","nodes":1,"replicas":2,"localBatch":64,"stepTime":0.1,"syncTime":0.02,"gradSqr":1,"gradVar":5}`)
	require.NoError(t, err)
	bm := m.Bootstrap()
	assert.Equal(t, 2, bm.Replicas)
	require.NotNil(t, bm.Grad)
	assert.Equal(t, goodput.GradStats{Sqr: 1, Var: 5}, *bm.Grad)

	// one pipeline over 2 nodes parses; the tracker checks it against the
	// job's stages (a data-parallel job's tracker refuses it)
	m, err = ParseMeasurement("ns/a", `{"type":"a100","nodes":2,"replicas":1,"localBatch":1,"stepTime":0.1,"syncTime":0.02}`)
	require.NoError(t, err)
	hy, err := bootstrap.New(bootstrap.Spec{InitBatch: 4, MaxBatch: 64, Stages: map[string]int{"a100": 4}, MicroBatches: 4}, nil)
	require.NoError(t, err)
	_, err = hy.Observe(m.Type, m.Bootstrap())
	assert.NoError(t, err)
	dp, err := bootstrap.New(bootstrap.Spec{InitBatch: 4, MaxBatch: 64, Limits: map[string]goodput.Limits{"a100": {MinLocalBatch: 1, MaxLocalBatch: 64}}}, nil)
	require.NoError(t, err)
	_, err = dp.Observe(m.Type, m.Bootstrap())
	assert.ErrorIs(t, err, bootstrap.ErrInvalidInput)

	for name, v := range map[string]string{
		"another job's ID": `{"job":"ns/b","type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0}`,
		"NaN":              `{"type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":NaN,"syncTime":0}`,
		"huge replicas":    `{"type":"a100","nodes":1,"replicas":1000000000,"localBatch":64,"stepTime":0.1,"syncTime":0}`,
		"zero replicas":    `{"type":"a100","nodes":1,"replicas":0,"localBatch":64,"stepTime":0.1,"syncTime":0}`,
		"zero nodes":       `{"type":"a100","nodes":0,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0}`,
		"negative grad":    `{"type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0,"gradSqr":-1,"gradVar":1}`,
		"half grad":        `{"type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0,"gradSqr":1}`,
		"1 MB":             strings.Repeat(" ", 1<<20),
		"bad type":         `{"type":"","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0}`,
	} {
		_, err := ParseMeasurement("ns/a", v)
		assert.ErrorIs(t, err, ErrAnnotation, name)
	}
}

// FuzzParseJobSpec: any annotation values give a spec or an ErrAnnotation
// error, never a panic; a spec that parses has a valid tracker spec and
// builds a tracker.
func FuzzParseJobSpec(f *testing.F) {
	a := validAnn()
	f.Add(a[AnnKind], a[AnnMinGPUs], a[AnnMaxGPUs], "", a[AnnInitBatch], a[AnnMaxBatch], a[AnnLimits], a[AnnProfile], "30s")
	f.Add("rigid", "", "", "12", "64", "64", "t4=1-64", "", "")
	f.Add("strong-scaling", "2", "1", "", "1", "1", "x=1-1", "[]", "-1s")
	f.Fuzz(func(t *testing.T, kind, minG, maxG, gpus, ib, mb, limits, profile, cost string) {
		ann := map[string]string{AnnKind: kind, AnnMinGPUs: minG, AnnMaxGPUs: maxG, AnnGPUs: gpus,
			AnnInitBatch: ib, AnnMaxBatch: mb, AnnLimits: limits, AnnProfile: profile, AnnRestartCost: cost}
		s, err := ParseJobSpec(ann)
		if err != nil {
			require.ErrorIs(t, err, ErrAnnotation)
			return
		}
		require.NoError(t, s.Model.Validate())
		require.LessOrEqual(t, s.MaxGPUs, MaxJobGPUs)
		for _, p := range s.Profile {
			require.False(t, math.IsNaN(p.StepTime))
		}
		_, _ = NewTracker(&s) // seeding may refuse a degenerate profile, but never panics
		_, _ = ParseMeasurement("ns/j", profile)
	})
}
