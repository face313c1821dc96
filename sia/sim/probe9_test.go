package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe9ClusterLimitsNamed: a cluster spec over the limits is refused
// with the limit it breaks. "A:100000x16" and "A:1x2048" were refused as
// "node count and GPUs per node must be positive integers", which they are.
func TestProbe9ClusterLimitsNamed(t *testing.T) {
	for spec, want := range map[string]string{
		"A:100000x16": "at most 65536 nodes of at most 1024 GPUs",
		"A:1x2048":    "at most 65536 nodes of at most 1024 GPUs",
		"A:0x8":       "positive integers",
		"A:1x-1":      "positive integers",
		"A:1xone":     "positive integers",
	} {
		_, err := ParseCluster(spec, 1)
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
		assert.Contains(t, err.Error(), spec, spec)
	}
	c, err := ParseCluster("A:65536x1", 1)
	require.NoError(t, err)
	assert.Equal(t, 65536, c.Groups[0].Nodes)
}
