package bootstrap_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
)

// TestProbe11CSVUnderflow: a profile cell holding a nonzero number below
// the smallest float64 (sync_time 1e-400) was read as 0, silently; it is
// an error naming the file, line and column. 0 and subnormals still read.
func TestProbe11CSVUnderflow(t *testing.T) {
	const header = "placement,local_bsz,step_time,sync_time\n"
	_, err := bootstrap.ReadPlacements(strings.NewReader(header+"1,64,0.1,0.01\n2,32,0.2,1e-400\n"), "p.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "p.csv:3")
	assert.Contains(t, err.Error(), "sync_time")
	assert.Contains(t, err.Error(), "underflows")
	_, err = bootstrap.ReadScalability(strings.NewReader("num_nodes,num_replicas,local_bsz,step_time,sync_time\n1,1,64,0.1,-1e-999\n"), "s.csv")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "s.csv:2")
	assert.Contains(t, err.Error(), "underflows")
	for _, v := range []string{"0", "0e-400", "5e-324"} {
		_, err := bootstrap.ReadPlacements(strings.NewReader(header+"1,64,0.1,"+v+"\n"), "p.csv")
		require.NoError(t, err, v)
	}
}

// TestProbe11TrackerJSONUnderflow: a saved tracker whose observation has
// "SyncTime":1e-400 restored a sync time of 0; it is an error naming the
// line and the key's path.
func TestProbe11TrackerJSONUnderflow(t *testing.T) {
	s := string(savedTracker(t))
	require.Contains(t, s, `"SyncTime":0.01`)
	var back bootstrap.Tracker
	err := json.Unmarshal([]byte(strings.Replace(s, `"SyncTime":0.01`, `"SyncTime":1e-400`, 1)), &back)
	require.ErrorIs(t, err, bootstrap.ErrInvalidInput)
	assert.Contains(t, err.Error(), "types[0].observations[0].SyncTime")
	assert.Contains(t, err.Error(), "underflows")
	assert.Contains(t, err.Error(), "line ")
}
