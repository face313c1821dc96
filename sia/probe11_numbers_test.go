package sia_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// TestProbe11JSONUnderflow: a Plan's Objective or a Job's static model
// parameter written as a nonzero number below the smallest float64 (as a
// number or as the string form) was decoded as 0; it is an error naming
// the value. 0, subnormals and the infinite string forms still decode.
func TestProbe11JSONUnderflow(t *testing.T) {
	for _, in := range []string{`{"Objective":1e-400}`, `{"Objective":"1e-400"}`, `{"Bound":"-2e-324"}`} {
		var p sia.Plan
		err := json.Unmarshal([]byte(in), &p)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), "underflows", in)
	}
	for _, in := range []string{`{"Objective":0,"Bound":"+Inf"}`, `{"Objective":5e-324}`, `{"Objective":"0e-400"}`} {
		var p sia.Plan
		require.NoError(t, json.Unmarshal([]byte(in), &p), in)
	}
	job := `{"ID":"j","Models":{"static":{"t4":{"Params":{"AlphaC":1e-400}}}}}`
	var j sia.Job
	err := json.Unmarshal([]byte(job), &j)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "underflows")
	assert.Contains(t, err.Error(), "AlphaC")
}
