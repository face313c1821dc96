package bootstrap

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/goodput"
)

// TestObservePipelineAcrossNodes: a hybrid-parallel job's tracker accepts a
// measurement with fewer replicas (pipelines) than nodes exactly when the
// type's Spec.Stages GPUs per replica cover the nodes; a data-parallel
// job's tracker keeps Replicas >= Nodes. Refusals name the field.
func TestObservePipelineAcrossNodes(t *testing.T) {
	hybrid := Spec{InitBatch: 4, MaxBatch: 64, Stages: map[string]int{"b": 4, "one": 1}, MicroBatches: 4}
	dp := Spec{InitBatch: 4, MaxBatch: 64, Limits: map[string]goodput.Limits{"b": {MinLocalBatch: 1, MaxLocalBatch: 32}}}
	cases := []struct {
		name            string
		spec            Spec
		typ             string
		nodes, replicas int
		field           string // "" when accepted
	}{
		{"one 4-stage pipeline on 2 nodes", hybrid, "b", 2, 1, ""},
		{"one 4-stage pipeline on 4 nodes", hybrid, "b", 4, 1, ""},
		{"one 4-stage pipeline on 5 nodes", hybrid, "b", 5, 1, "Measurement.Replicas"},
		{"two 4-stage pipelines on 8 nodes", hybrid, "b", 8, 2, ""},
		{"two 4-stage pipelines on 9 nodes", hybrid, "b", 9, 2, "Measurement.Replicas"},
		{"zero pipelines", hybrid, "b", 1, 0, "Measurement.Replicas"},
		{"1-stage pipeline on 2 nodes", hybrid, "one", 2, 1, "Measurement.Replicas"},
		{"data parallel, 1 replica on 2 nodes", dp, "b", 2, 1, "Measurement.Replicas"},
		{"data parallel, 2 replicas on 2 nodes", dp, "b", 2, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := New(c.spec, nil)
			require.NoError(t, err)
			_, err = tr.Observe(c.typ, Measurement{Nodes: c.nodes, Replicas: c.replicas, LocalBatch: 1, StepTime: 0.2, SyncTime: 0.01})
			if c.field == "" {
				require.NoError(t, err)
				_, src := tr.Model(c.typ)
				assert.Equal(t, Measured, src)
				got := tr.Observations(c.typ)
				require.Len(t, got, 1)
				assert.Equal(t, c.spec.Stages[c.typ], got[0].Stages, "the stored observation names its stages")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, c.field, ie.Field, "%v", err)
			assert.Equal(t, c.typ, ie.Type)
			assert.Empty(t, tr.Observations(c.typ), "a refused measurement is not kept")
		})
	}
}

// TestSeedPipelineStages: Seed rows may leave Stages 0 (the tracker fills
// in the Spec's) or give the Spec's; other stages are refused by name, and
// the caller's rows are not modified. The stored observations survive a
// JSON round trip, also from JSON written without Stages.
func TestSeedPipelineStages(t *testing.T) {
	spec := Spec{InitBatch: 4, MaxBatch: 64, Stages: map[string]int{"b": 4}, MicroBatches: 4}
	tr, err := New(spec, &Options{Mode: Oracle})
	require.NoError(t, err)
	rows := []goodput.Observation{
		{Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 0.2, SyncTime: 0.01},
		{Nodes: 2, Replicas: 1, LocalBatch: 1, StepTime: 0.3, SyncTime: 0.1, Stages: 4},
	}
	require.NoError(t, tr.Seed("b", rows...))
	assert.Zero(t, rows[0].Stages, "Seed must not modify the caller's rows")
	for _, o := range tr.Observations("b") {
		assert.Equal(t, 4, o.Stages)
	}

	bad := []goodput.Observation{{Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 0.2, SyncTime: 0.01, Stages: 2}}
	err = tr.Seed("b", bad...)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "Seed row 0.Stages", ie.Field)

	data, err := json.Marshal(tr)
	require.NoError(t, err)
	var back Tracker
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, tr.Observations("b"), back.Observations("b"))

	// JSON of a tracker written before Observation.Stages existed: the
	// observations take the Spec's stages
	j := string(data)
	require.Contains(t, j, `,"Stages":4}`)
	var legacy Tracker
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(j, `,"Stages":4}`, "}")), &legacy))
	assert.Equal(t, tr.Observations("b"), legacy.Observations("b"))

	// JSON whose observation names other stages is refused by name
	var wrong Tracker
	err = json.Unmarshal([]byte(strings.Replace(j, `,"Stages":4}`, `,"Stages":3}`, 1)), &wrong)
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "JSON.types[0].observations[0].Stages", ie.Field, "%v", err)
}
