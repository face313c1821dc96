package siakube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe11MeasurementUnderflow: a measurement annotation whose
// syncTime or gradVar is a nonzero number below the smallest float64
// (1e-400) was read as 0; it is an annotation error naming the key.
func TestProbe11MeasurementUnderflow(t *testing.T) {
	for _, v := range []string{
		`{"type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":1e-400}`,
		`{"type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0.01,"gradSqr":1,"gradVar":-1e-400}`,
	} {
		_, err := ParseMeasurement("ns/a", v)
		require.ErrorIs(t, err, ErrAnnotation, v)
		assert.Contains(t, err.Error(), "underflows", v)
	}
	_, err := ParseMeasurement("ns/a", `{"type":"a100","nodes":1,"replicas":1,"localBatch":64,"stepTime":0.1,"syncTime":0e-400}`)
	require.NoError(t, err)
}
