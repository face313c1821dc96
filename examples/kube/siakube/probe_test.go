package siakube

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeMeasurementJSON: the agent's measurement annotation rejects what
// encoding/json would misread, naming the key: a key given twice (the last
// would win), a key in another case, an unknown key, data after the value,
// out-of-range numbers, and null for a number ("syncTime":null read as a
// sync time of 0 before).
func TestProbeMeasurementJSON(t *testing.T) {
	const ok = `{"type":"a100","nodes":1,"replicas":2,"localBatch":32,"stepTime":0.5,"syncTime":0.1}`
	_, err := ParseMeasurement("ns/j", ok)
	require.NoError(t, err)
	for in, want := range map[string]string{
		`{"type":"a100","nodes":1,"replicas":2,"localBatch":32,"stepTime":0.5,"syncTime":null}`:               `syncTime: null for a float64`,
		`{"type":"a100","nodes":null,"replicas":2,"localBatch":32,"stepTime":0.5,"syncTime":0.1}`:             `nodes: null for a int`,
		`{"type":"a100","nodes":1,"replicas":2,"localBatch":32,"stepTime":0.5,"syncTime":0.1,"syncTime":0.4}`: `key "syncTime" given twice`,
		`{"type":"a100","nodes":1,"replicas":2,"localBatch":32,"StepTime":0.5,"syncTime":0.1}`:                `key "StepTime" must be spelled "stepTime"`,
		`{"type":"a100","nodes":1,"replicas":2,"localBatch":32,"stepTime":0.5,"syncTime":0.1,"gpus":2}`:       `unknown key "gpus"`,
		ok + ` {}`: `unexpected data`,
		`{"type":"a100","nodes":1,"replicas":2,"localBatch":1e30,"stepTime":0.5,"syncTime":0.1}`: `line 1:`,
		`{"type":"a100","nodes":1,"replicas":2,"localBatch":32,"stepTime":1e400,"syncTime":0.1}`: `line 1:`,
	} {
		_, err := ParseMeasurement("ns/j", in)
		require.Error(t, err, in)
		assert.True(t, errors.Is(err, ErrAnnotation), in)
		assert.Contains(t, err.Error(), AnnMeasurement, in)
		assert.Contains(t, err.Error(), want, in)
	}
}
