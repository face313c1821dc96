package sia_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// FuzzJobPlanJSON: decoding any bytes as a Job or a Plan never panics, and
// what decodes encodes again to JSON that decodes to the same encoding (the
// wire form is a fixed point after one round trip).
func FuzzJobPlanJSON(f *testing.F) {
	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 128, MaxBatch: 4096, Limits: map[string]goodput.Limits{
		"a100": {MinLocalBatch: 32, MaxLocalBatch: 4096}}}, nil)
	require.NoError(f, err)
	require.NoError(f, tr.Seed("a100", goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 128, StepTime: 0.02, SyncTime: 0.0002}))
	static := bootstrap.Static{"t4": {Params: goodput.Params{AlphaC: 0.01, BetaC: 0.0001, AlphaR: 0.002, BetaR: 0.001, AlphaN: 0.02, BetaN: 0.005, Gamma: 1.5},
		Grad: goodput.GradStats{Sqr: 1, Var: 50}, InitBatch: 128, MaxBatch: 4096, Limits: goodput.Limits{MinLocalBatch: 32, MaxLocalBatch: 4096}}}
	for _, j := range []sia.Job{
		{ID: "a", Kind: sia.Adaptive, Models: tr, Submitted: time.Unix(100, 0).UTC(), MaxGPUs: 8},
		{ID: "b", Kind: sia.Rigid, GPUs: 4, Models: static, Types: []string{"t4"}, NonPreemptible: true},
		{ID: "c"},
	} {
		b, err := json.Marshal(j)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte(`{"Objective":"+Inf","Bound":"NaN","Decisions":null}`))
	f.Add([]byte(`{"Objective":1e308,"Bound":-1e308}`))
	f.Add([]byte(`{"Models":{"tracker":{},"static":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var j sia.Job
		if json.Unmarshal(data, &j) == nil {
			b, err := json.Marshal(j)
			if err == nil {
				var j2 sia.Job
				require.NoError(t, json.Unmarshal(b, &j2), "%s", b)
				b2, err := json.Marshal(j2)
				require.NoError(t, err)
				require.JSONEq(t, string(b), string(b2))
			}
		}
		var p sia.Plan
		if json.Unmarshal(data, &p) == nil {
			b, err := json.Marshal(p)
			if err == nil {
				var p2 sia.Plan
				require.NoError(t, json.Unmarshal(b, &p2), "%s", b)
				b2, err := json.Marshal(p2)
				require.NoError(t, err)
				require.Equal(t, string(b), string(b2))
			}
		}
	})
}

// TestProbe5EmptyStaticRoundTrip: a job whose Models are empty Static
// models (no model for any type yet) encoded as "Models":{} and decoded
// with no Models at all (found by FuzzJobPlanJSON). It now decodes as the
// empty Static models it was.
func TestProbe5EmptyStaticRoundTrip(t *testing.T) {
	b, err := json.Marshal(sia.Job{ID: "j", Models: bootstrap.Static{}})
	require.NoError(t, err)
	var j sia.Job
	require.NoError(t, json.Unmarshal(b, &j))
	require.Equal(t, bootstrap.Static{}, j.Models, "%s", b)
}
