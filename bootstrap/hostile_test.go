package bootstrap_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

const hostileHeader = "placement,local_bsz,step_time,sync_time\n"

// TestHostilePlacementsRejected: malformed placements files a user could
// produce by hand; each error names the file, the line and the column.
func TestHostilePlacementsRejected(t *testing.T) {
	cases := []struct {
		name, body string
		line       int
		column     string
	}{
		{"header wrong case", "Placement,local_bsz,step_time,sync_time\n1,64,0.1,0.01\n", 1, "placement"},
		{"step time overflows", hostileHeader + "1,64,1e400,0.01\n", 2, "step_time"},
		{"step time with unit", hostileHeader + "1,64,0.1s,0.01\n", 2, "step_time"},
		{"step time empty", hostileHeader + "1,64,,0.01\n", 2, "step_time"},
		{"sync negative", hostileHeader + "1,64,0.1,-0.01\n", 2, "sync_time"},
		{"sync -0 equal to step 0", hostileHeader + "1,64,0,-0\n", 2, "step_time"},
		{"batch above int", hostileHeader + "1,99999999999999999999,0.1,0.01\n", 2, "local_bsz"},
		{"batch negative", hostileHeader + "1,-64,0.1,0.01\n", 2, "local_bsz"},
		{"placement empty", hostileHeader + ",64,0.1,0.01\n", 2, "placement"},
		{"placement letters", hostileHeader + "2a,64,0.1,0.01\n", 2, "placement"},
		{"placement negative", hostileHeader + "-1,64,0.1,0.01\n", 2, "placement"},
		{"placement with space inside", hostileHeader + "2 2,64,0.1,0.01\n", 2, "placement"},
		{"placement too long", hostileHeader + strings.Repeat("1", 100000) + ",64,0.1,0.01\n", 2, "placement"},
		{"extra field", hostileHeader + "1,64,0.1,0.01,9\n", 2, ""},
		{"quote unterminated", hostileHeader + "\"1,64,0.1,0.01\n", 2, ""},
		{"second BOM in a row", hostileHeader + "\ufeff1,64,0.1,0.01\n", 2, "placement"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := bootstrap.ReadPlacements(strings.NewReader(c.body), "p.csv")
			require.Error(t, err, "accepted: %+v", rows)
			require.ErrorIs(t, err, bootstrap.ErrMalformed)
			var pe *bootstrap.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "p.csv", pe.File)
			if c.line > 0 {
				assert.Equal(t, c.line, pe.Line, err.Error())
			}
			if c.column != "" {
				assert.Equal(t, c.column, pe.Column, err.Error())
			}
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestHostilePlacementsAccepted: BOM, CRLF, blank lines, spaces around
// fields and columns in another order read as the plain file does.
func TestHostilePlacementsAccepted(t *testing.T) {
	want, err := bootstrap.ReadPlacements(strings.NewReader(hostileHeader+"1,64,0.1,0.01\n22,32,0.2,0.05\n"), "p.csv")
	require.NoError(t, err)
	for name, body := range map[string]string{
		"BOM":             "\ufeff" + hostileHeader + "1,64,0.1,0.01\n22,32,0.2,0.05\n",
		"CRLF":            strings.ReplaceAll(hostileHeader+"1,64,0.1,0.01\n22,32,0.2,0.05\n", "\n", "\r\n"),
		"blank lines":     hostileHeader + "\n1,64,0.1,0.01\n\n\n22,32,0.2,0.05\n\n",
		"no final EOL":    hostileHeader + "1,64,0.1,0.01\n22,32,0.2,0.05",
		"reordered":       "sync_time,step_time,local_bsz,placement\n0.01,0.1,64,1\n0.05,0.2,32,22\n",
		"BOM CRLF blanks": "\ufeff" + strings.ReplaceAll(hostileHeader+"\n1,64,0.1,0.01\n22,32,0.2,0.05\n\n", "\n", "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := bootstrap.ReadPlacements(strings.NewReader(body), "p.csv")
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// TestHostileScalabilityAndSeed: the other readers on the same classes.
func TestHostileScalabilityAndSeed(t *testing.T) {
	const sh = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
	for name, body := range map[string]string{
		"nodes zero":         sh + "0,8,64,0.2,0.05\n",
		"replicas above int": sh + "1,1e30,64,0.2,0.05\n",
		"step NaN":           sh + "1,8,64,nan,0.05\n",
		"sync Inf":           sh + "1,8,64,0.2,-inf\n",
		"duplicate column":   "num_nodes,num_replicas,local_bsz,step_time,sync_time,sync_time\n1,8,64,0.2,0.05,0.01\n",
		"header wrong case":  "NUM_NODES,num_replicas,local_bsz,step_time,sync_time\n1,8,64,0.2,0.05\n",
		"binary garbage":     "\x00\x01\x02\xff\xfe",
	} {
		t.Run("scalability "+name, func(t *testing.T) {
			rows, err := bootstrap.ReadScalability(strings.NewReader(body), "s.csv")
			require.Error(t, err, "accepted: %+v", rows)
			require.ErrorIs(t, err, bootstrap.ErrMalformed)
			assert.Contains(t, err.Error(), "s.csv")
		})
	}
	const vh = "progress,iteration,metric,grad_sqr,grad_var\n"
	for name, body := range map[string]string{
		"grad NaN":           vh + "10,10,0.5,NaN,2\n",
		"grad negative":      vh + "10,10,0.5,1,-2\n",
		"iteration negative": vh + "10,-10,0.5,1,2\n",
		"progress Inf":       vh + "Inf,10,0.5,1,2\n",
		"metric NaN":         vh + "10,10,NaN,1,2\n",
	} {
		t.Run("validation "+name, func(t *testing.T) {
			rows, err := bootstrap.ReadValidation(strings.NewReader(body), "v.csv")
			require.Error(t, err, "accepted: %+v", rows)
			require.ErrorIs(t, err, bootstrap.ErrMalformed)
			assert.Contains(t, err.Error(), "v.csv:2")
		})
	}
}

// savedTracker returns the saved state (JSON) of a tracker of one type "a"
// seeded with one observation.
func savedTracker(t *testing.T) []byte {
	t.Helper()
	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 64, MaxBatch: 1024,
		Limits: map[string]goodput.Limits{"a": {MinLocalBatch: 8, MaxLocalBatch: 512}}}, nil)
	require.NoError(t, err)
	require.NoError(t, tr.Seed("a", goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 64, StepTime: 0.1, SyncTime: 0.01}))
	good, err := json.Marshal(tr)
	require.NoError(t, err)
	return good
}

// TestHostileTrackerJSON: a tracker's saved state with bad numbers or
// shapes is refused with an error wrapping ErrInvalidInput.
func TestHostileTrackerJSON(t *testing.T) {
	good := savedTracker(t)
	var back bootstrap.Tracker
	require.NoError(t, json.Unmarshal(good, &back))
	s := string(good)
	edit := func(old, new string) string {
		require.Contains(t, s, old)
		return strings.Replace(s, old, new, 1)
	}
	for name, in := range map[string]string{
		"type not in spec":     edit(`"name":"a"`, `"name":"b"`),
		"negative refits":      edit(`"refits":1`, `"refits":-1`),
		"refits fraction":      edit(`"refits":1`, `"refits":0.5`),
		"step time string NaN": edit(`"StepTime":0.1`, `"StepTime":"NaN"`),
		"step time zero":       edit(`"StepTime":0.1`, `"StepTime":0`),
		"sync above step":      edit(`"SyncTime":0.01`, `"SyncTime":1`),
		"replicas below nodes": edit(`"Replicas":1`, `"Replicas":0`),
		"trailing data":        s + `{}`,
		"not an object":        `[` + s + `]`,
		"version negative":     edit(`"version":`, `"version":-1,"x":`),
		"unknown key (typo)":   edit(`"observations"`, `"observation"`),
		"duplicate key":        edit(`"refits":1`, `"refits":1,"refits":2`),
		"duplicate types":      edit(`"types":`, `"types":[],"types":`),
		"wrong case":           edit(`"mode"`, `"Mode"`),
		"wrong case nested":    edit(`"StepTime"`, `"steptime"`),
	} {
		t.Run(name, func(t *testing.T) {
			var tt bootstrap.Tracker
			err := json.Unmarshal([]byte(in), &tt)
			require.Error(t, err)
			var se *json.SyntaxError
			if !errors.As(err, &se) {
				assert.ErrorIs(t, err, bootstrap.ErrInvalidInput, err.Error())
			}
		})
	}
}
