package siakube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileAnnotationJSON: the JSON annotations reject unknown keys, so
// they also reject what encoding/json would silently misread: a key given
// twice (it keeps the last), a key in another case (it matches it anyway)
// and data after the value.
func TestHostileAnnotationJSON(t *testing.T) {
	const good = `{"type":"a100","nodes":1,"replicas":2,"localBatch":64,"stepTime":0.1,"syncTime":0.02}`
	_, err := ParseMeasurement("ns/a", good)
	require.NoError(t, err)
	for name, v := range map[string]string{
		"duplicate key":    `{"type":"a100","nodes":1,"replicas":2,"localBatch":64,"stepTime":0.1,"stepTime":100,"syncTime":0.02}`,
		"wrong case":       `{"type":"a100","nodes":1,"replicas":2,"localBatch":64,"StepTime":0.1,"syncTime":0.02}`,
		"wrong case 2":     `{"TYPE":"a100","nodes":1,"replicas":2,"localBatch":64,"stepTime":0.1,"syncTime":0.02}`,
		"trailing bracket": good + `]`,
		"trailing object":  good + `{}`,
		"trailing brace":   good + `}`,
	} {
		_, err := ParseMeasurement("ns/a", v)
		assert.ErrorIs(t, err, ErrAnnotation, name)
	}
	_, err = parseProfile(`[{"type":"a100","localBatch":64,"stepTime":0.1,"syncTime":0.01}]`, nil)
	require.NoError(t, err)
	for name, v := range map[string]string{
		"duplicate key": `[{"type":"a100","localBatch":64,"localBatch":8,"stepTime":0.1,"syncTime":0.01}]`,
		"wrong case":    `[{"type":"a100","LocalBatch":64,"stepTime":0.1,"syncTime":0.01}]`,
		"trailing":      `[{"type":"a100","localBatch":64,"stepTime":0.1,"syncTime":0.01}]]`,
	} {
		_, err := parseProfile(v, nil)
		assert.ErrorIs(t, err, ErrAnnotation, name)
	}
}
