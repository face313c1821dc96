package simcli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileFlags: flag values a new user would try, each rejected before
// any simulation with an error naming the flag.
func TestHostileFlags(t *testing.T) {
	good := writeWorkload(t, small)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"round 0", []string{"-round", "0", "-workload", good}, "-round"},
		{"round 999ms", []string{"-round", "999ms", "-workload", good}, "-round"},
		{"round max duration", []string{"-round", "2562047h", "-workload", good}, "-round"},
		{"hours 1e9", []string{"-hours", "1e9"}, "hours"},
		{"hours +Inf", []string{"-hours", "+Inf"}, "hours"},
		{"hours negative", []string{"-hours", "-2"}, "hours"},
		{"hours zero", []string{"-hours", "0"}, "hours"},
		{"rate +Inf", []string{"-rate", "Inf"}, "rate"},
		{"rate zero", []string{"-rate", "0"}, "rate"},
		{"rate huge", []string{"-rate", "1e12"}, "rate"},
		{"rate negative", []string{"-rate", "-20"}, "rate"},
		{"p NaN", []string{"-p", "NaN", "-workload", good}, "-p"},
		{"p +Inf", []string{"-p", "+Inf", "-workload", good}, "-p"},
		{"lambda Inf", []string{"-lambda", "-Inf", "-workload", good}, "-lambda"},
		{"lambda same sign as p", []string{"-p", "-0.5", "-lambda", "-1", "-workload", good}, "-lambda"},
		{"scale negative", []string{"-scale", "-1"}, "-scale"},
		{"scale huge", []string{"-scale", "99999999999999999999"}, "-scale"},
		{"scale 1025", []string{"-scale", "1025"}, "-scale"},
		{"scale empty item", []string{"-scale", "1,,2"}, "-scale"},
		{"scale fraction", []string{"-scale", "1.5"}, "-scale"},
		{"scale blows node count", []string{"-scale", "1024", "-cluster", "t4:100x4"}, "scale"},
		{"parallel 0", []string{"-parallel", "0"}, "-parallel"},
		{"parallel negative", []string{"-parallel", "-3"}, "-parallel"},
		{"variant case", []string{"-variant", "Paper"}, "-variant"},
		{"policy empty item", []string{"-policy", "sia,,gavel"}, "policy"},
		{"policy wrong case", []string{"-policy", "Sia"}, "policy"},
		{"cluster 0 nodes", []string{"-cluster", "t4:0x4", "-workload", good}, "t4:0x4"},
		{"cluster 0 GPUs", []string{"-cluster", "t4:2x0", "-workload", good}, "t4:2x0"},
		{"cluster negative", []string{"-cluster", "t4:-2x4", "-workload", good}, "t4:-2x4"},
		{"cluster overflow", []string{"-cluster", "t4:99999999999999999999x4", "-workload", good}, "t4:"},
		{"cluster GPUs per node huge", []string{"-cluster", "t4:1x4096", "-workload", good}, "t4:1x4096"},
		{"cluster type twice", []string{"-cluster", "t4:1x4,t4:2x4", "-workload", good}, "t4"},
		{"cluster empty", []string{"-cluster", "", "-workload", good}, "cluster"},
		{"cluster trailing comma", []string{"-cluster", "t4:1x4,", "-workload", good}, "cluster"},
		{"cluster no type", []string{"-cluster", ":1x4", "-workload", good}, "cluster"},
		{"workload directory without files", []string{"-workload", t.TempDir()}, "workload"},
		{"workload duplicate names", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,0,bert,1,8\nx,5,bert,1,8\n")}, "duplicate"},
		{"workload replicas zero", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,0,bert,0,8\n")}, "num_replicas"},
		{"workload replicas huge", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,0,bert,1e30,8\n")}, "num_replicas"},
		{"workload batch above int32", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,0,bert,1,2147483648\n")}, "batch_size"},
		{"workload time Inf", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,Inf,bert,1,8\n")}, "time"},
		{"workload time NaN", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,NaN,bert,1,8\n")}, "time"},
		{"workload time empty", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,,bert,1,8\n")}, "time"},
		{"workload category wrong", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size,category\nx,0,bert,1,8,elastic\n")}, "category"},
		{"workload header wrong case", []string{"-workload", writeWorkload(t, "Name,time,application,num_replicas,batch_size\nx,0,bert,1,8\n")}, "name"},
		{"workload header only BOM", []string{"-workload", writeWorkload(t, "\ufeff")}, "workload-1.csv"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := Run(ctx, tc.args, &out, &errb)
			require.Error(t, err, "accepted; stdout: %s", out.String())
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, strings.TrimSpace(err.Error()), "\n")
		})
	}
}

// TestHostileWorkloadAccepted: a workload with a BOM, CRLF line ends,
// blank lines, unsorted times and names differing only in case runs; the
// per-job output keeps every job.
func TestHostileWorkloadAccepted(t *testing.T) {
	body := "\ufeffname,time,application,num_replicas,batch_size\r\n" +
		"b,200,cifar10,1,128\r\n\r\n" +
		"A,0,cifar10,1,128\r\n" +
		"a,100,cifar10,1,128\r\n\r\n"
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, body), "-policy", "sia", "-json", "-noftf"}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), `"jobs":3`)
}
