package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseCluster: on any spec and scale ParseCluster returns (no panic);
// an accepted cluster is valid, within MaxClusterGPUs, and its String
// parses back to the same cluster.
func FuzzParseCluster(f *testing.F) {
	for _, s := range []string{"heterogeneous", "t4:6x4,a100:2x8", "t4:0x4", " a : 2 X 3 ", "t4:9223372036854775807x8", "x:1x1,y:65536x16", "t4:+1x4", "t4:4x4,t4:4x4", ""} {
		f.Add(s, 1)
	}
	f.Add("t4:2x4", 40000)
	f.Fuzz(func(t *testing.T, spec string, scale int) {
		c, err := ParseCluster(spec, scale)
		if err != nil {
			return
		}
		require.NoError(t, c.Validate())
		total := 0
		for _, g := range c.Groups {
			total += g.Nodes * g.GPUsPerNode
		}
		require.LessOrEqual(t, total, MaxClusterGPUs)
		back, err := ParseCluster(c.String(), 1)
		require.NoError(t, err, "%q", c.String())
		require.Equal(t, c, back)
	})
}
