package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// TestProbeWorkloadReader: issue 10's class 6 on the workload (trace)
// reader: good variants (BOM, CRLF, reordered and extra columns, spaces,
// blank lines) read the same jobs; each bad file is an *InputError naming
// the file and line (and the job and column for a field).
func TestProbeWorkloadReader(t *testing.T) {
	const good = "name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\nj2,30.5,bert,4,64\n"
	want, err := ReadWorkload(strings.NewReader(good), "w.csv")
	require.NoError(t, err)
	require.Len(t, want.Jobs, 2)
	for name, in := range map[string]string{
		"BOM":         "\ufeff" + good,
		"CRLF":        strings.ReplaceAll(good, "\n", "\r\n"),
		"reordered":   "batch_size,num_replicas,application,time,name\n128,1,cifar10,0,j1\n64,4,bert,30.5,j2\n",
		"extra":       "name,x,time,application,num_replicas,batch_size\nj1,a,0,cifar10,1,128\nj2,b,30.5,bert,4,64\n",
		"spaces":      "name, time ,application,num_replicas,batch_size\n j1 ,0, cifar10 ,1,128\nj2,30.5,bert,4,64\n",
		"blank lines": "name,time,application,num_replicas,batch_size\n\nj1,0,cifar10,1,128\n\nj2,30.5,bert,4,64\n\n",
		"exponents":   "name,time,application,num_replicas,batch_size\nj1,0e3,cifar10,1e0,1.28e2\nj2,3.05e1,bert,4,64\n",
	} {
		got, err := ReadWorkload(strings.NewReader(in), "w.csv")
		if assert.NoError(t, err, name) {
			for i := range got.Jobs {
				got.Jobs[i].Line = want.Jobs[i].Line // blank lines shift them
			}
			assert.Equal(t, want.Jobs, got.Jobs, name)
		}
	}
	for _, c := range []struct{ name, in, where string }{
		{"empty", "", "w.csv:1"},
		{"duplicate column", "name,time,time,application,num_replicas,batch_size\nj1,0,5,cifar10,1,128\n", "w.csv:1"},
		{"missing column", "name,time,application,num_replicas\nj1,0,cifar10,1\n", "w.csv:1"},
		{"wrong-case column", "name,Time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\n", "w.csv:1"},
		{"short row", good + "j3,0,cifar10,1\n", "w.csv:4"},
		{"time NaN", good + "j3,NaN,cifar10,1,128\n", "w.csv:4"},
		{"time Inf", good + "j3,+Inf,cifar10,1,128\n", "w.csv:4"},
		{"time 1e308", good + "j3,1e308,cifar10,1,128\n", "w.csv:4"},
		{"time negative", good + "j3,-1,cifar10,1,128\n", "w.csv:4"},
		{"time text", good + "j3,noon,cifar10,1,128\n", "w.csv:4"},
		{"replicas 0", good + "j3,0,cifar10,0,128\n", "w.csv:4"},
		{"replicas fraction", good + "j3,0,cifar10,1.5,128\n", "w.csv:4"},
		{"replicas huge", good + "j3,0,cifar10,1e30,128\n", "w.csv:4"},
		{"batch 2^63", good + "j3,0,cifar10,1,9223372036854775808\n", "w.csv:4"},
		{"duplicate name", good + "j1,0,cifar10,1,128\n", "w.csv:4"},
		{"empty name", good + ",0,cifar10,1,128\n", "w.csv:4"},
		{"empty application", good + "j3,0,,1,128\n", "w.csv:4"},
		{"bad category", "name,time,application,num_replicas,batch_size,category\nj1,0,cifar10,1,128,elastic\n", "w.csv:2"},
		{"very long name", good + strings.Repeat("n", 1<<20) + ",x,cifar10,1,128\n", "w.csv:4"},
		{"bare quote", good + "j3,\"0,cifar10,1,128\n", "w.csv:4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl, err := ReadWorkload(strings.NewReader(c.in), "w.csv")
			require.Error(t, err, "accepted %+v", wl)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, err.Error(), c.where)
			assert.Less(t, len(err.Error()), 1<<12, "a bounded message")
		})
	}
}
