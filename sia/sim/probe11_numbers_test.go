package sim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

// TestProbe11WorkloadUnderflow: a submit time of 1e-400 was read as 0 (a
// job submitted at the start); it is an error naming file, line, job and
// column. 0 still reads.
func TestProbe11WorkloadUnderflow(t *testing.T) {
	const header = "name,time,application,num_replicas,batch_size\n"
	_, err := sim.ReadWorkload(strings.NewReader(header+"a,0,cifar10,1,128\nb,1e-400,cifar10,1,128\n"), "w.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "w.csv:3")
	assert.Contains(t, err.Error(), "time")
	assert.Contains(t, err.Error(), "underflows")
	_, err = sim.ReadWorkload(strings.NewReader(header+"a,0e-400,cifar10,1,128\n"), "w.csv")
	require.NoError(t, err)
}
