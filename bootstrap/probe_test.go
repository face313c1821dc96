package bootstrap_test

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
)

// TestProbeProfileReaders: issue 10's class 6 on the placements and
// scalability readers (the simulator reads its trace ground truth through
// them): each bad file is an error wrapping ErrMalformed that names the
// file, the line and, for a field, its column; each good variant (BOM,
// CRLF, reordered and extra columns, spaces) reads the same rows.
func TestProbeProfileReaders(t *testing.T) {
	const good = "placement,local_bsz,step_time,sync_time\n1,32,0.5,0.1\n22,64,1.5,0.7\n"
	want, err := bootstrap.ReadPlacements(strings.NewReader(good), "p.csv")
	require.NoError(t, err)
	require.Len(t, want, 2)
	for name, in := range map[string]string{
		"BOM":               "\ufeff" + good,
		"CRLF":              strings.ReplaceAll(good, "\n", "\r\n"),
		"reordered":         "sync_time,step_time,placement,local_bsz\n0.1,0.5,1,32\n0.7,1.5,22,64\n",
		"extra column":      "placement,x,local_bsz,step_time,sync_time\n1,a,32,0.5,0.1\n22,b,64,1.5,0.7\n",
		"spaces":            "placement, local_bsz , step_time,sync_time\n 1 ,32, 0.5 ,0.1\n22,64,1.5,0.7\n",
		"no final newline":  strings.TrimSuffix(good, "\n"),
		"integral decimals": "placement,local_bsz,step_time,sync_time\n1,32.0,0.5,0.1\n22,6.4e1,1.5,0.7\n",
	} {
		got, err := bootstrap.ReadPlacements(strings.NewReader(in), "p.csv")
		if assert.NoError(t, err, name) {
			assert.Equal(t, want, got, name)
		}
	}
	long := strings.Repeat("9", 1<<20)
	cases := []struct{ name, in, where string }{
		{"empty file", "", "p.csv: "},
		{"header only of another format", "num_nodes,num_replicas\n", "p.csv:1: column \"placement\""},
		{"duplicate column", "placement,local_bsz,step_time,step_time,sync_time\n1,32,0.5,64,0.1\n", "p.csv:1: column \"step_time\""},
		{"duplicate column after BOM", "\ufeffplacement,placement,local_bsz,step_time,sync_time\n1,1,32,0.5,0.1\n", "p.csv:1: column \"placement\""},
		{"missing column", "placement,local_bsz,step_time\n1,32,0.5\n", "p.csv:1: column \"sync_time\""},
		{"wrong-case column", "placement,local_bsz,Step_Time,sync_time\n1,32,0.5,0.1\n", "p.csv:1: column \"step_time\""},
		{"short row", good + "1,32,0.5\n", "p.csv:4"},
		{"non-numeric", good + "1,32,fast,0.1\n", "p.csv:4: column \"step_time\""},
		{"NaN text", good + "1,32,NaN,0.1\n", "p.csv:4: column \"step_time\""},
		{"Inf text", good + "1,32,0.5,Inf\n", "p.csv:4: column \"sync_time\""},
		{"infinity text", good + "1,32,infinity,0.1\n", "p.csv:4: column \"step_time\""},
		{"1e400", good + "1,32,1e400,0.1\n", "p.csv:4: column \"step_time\""},
		{"step 0", good + "1,32,0,0\n", "p.csv:4: column \"step_time\""},
		{"step -0", good + "1,32,-0,0\n", "p.csv:4: column \"step_time\""},
		{"negative step", good + "1,32,-0.5,0.1\n", "p.csv:4: column \"step_time\""},
		{"negative sync", good + "1,32,0.5,-0.1\n", "p.csv:4: column \"sync_time\""},
		{"batch 0", good + "1,0,0.5,0.1\n", "p.csv:4: column \"local_bsz\""},
		{"batch fraction", good + "1,3.5,0.5,0.1\n", "p.csv:4: column \"local_bsz\""},
		{"batch huge", good + "1,1e30,0.5,0.1\n", "p.csv:4: column \"local_bsz\""},
		{"batch 2^63", good + "1,9223372036854775808,0.5,0.1\n", "p.csv:4: column \"local_bsz\""},
		{"placement 0 digit", good + "10,32,0.5,0.1\n", "p.csv:4: column \"placement\""},
		{"placement letters", good + "1a,32,0.5,0.1\n", "p.csv:4: column \"placement\""},
		{"placement too long", good + strings.Repeat("1", 65) + ",32,0.5,0.1\n", "p.csv:4: column \"placement\""},
		{"very long line", good + long + ",32,0.5,0.1\n", "p.csv:4: column \"placement\""},
		{"very long number", good + "1,32," + long + "x,0.1\n", "p.csv:4: column \"step_time\""},
		{"very long count", good + "1," + long + ",0.5,0.1\n", "p.csv:4: column \"local_bsz\""},
		{"bare quote", good + "1,\"32,0.5,0.1\n", "p.csv:4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := bootstrap.ReadPlacements(strings.NewReader(c.in), "p.csv")
			require.Error(t, err, "accepted %v", rows)
			require.ErrorIs(t, err, bootstrap.ErrMalformed)
			var pe *bootstrap.ParseError
			require.True(t, errors.As(err, &pe))
			assert.Contains(t, err.Error(), c.where)
			assert.Less(t, len(err.Error()), 1200, "a one-line message of bounded size")
		})
	}
	// sync >= step is an error when the reader is asked to (the simulator's
	// ground truth asks)
	for _, in := range []string{good + "1,32,0.5,0.5\n", good + "1,32,0.5,0.6\n"} {
		_, err := bootstrap.ReadPlacementsWith(strings.NewReader(in), "p.csv", &bootstrap.ReadOptions{SyncBelowStep: true})
		require.ErrorIs(t, err, bootstrap.ErrMalformed)
		assert.Contains(t, err.Error(), "p.csv:4: column \"sync_time\"")
		_, err = bootstrap.ReadScalabilityWith(strings.NewReader("num_nodes,num_replicas,local_bsz,step_time,sync_time\n1,2,32,0.5,0.5\n"), "s.csv", &bootstrap.ReadOptions{SyncBelowStep: true})
		require.ErrorIs(t, err, bootstrap.ErrMalformed)
		assert.Contains(t, err.Error(), "s.csv:2: column \"sync_time\"")
	}
	// scalability: replicas below nodes
	_, err = bootstrap.ReadScalability(strings.NewReader("num_nodes,num_replicas,local_bsz,step_time,sync_time\n4,2,32,0.5,0.1\n"), "s.csv")
	require.ErrorIs(t, err, bootstrap.ErrMalformed)
	assert.Contains(t, err.Error(), "s.csv:2")
}

// TestProbeTrackerJSONWhere: a saved tracker state that encoding/json
// would misread is refused with an error that says where: the line and
// column and the path of the key (before, "key \"a\" given twice" named
// neither, and "SyncTime":null restored a sync time of 0).
func TestProbeTrackerJSONWhere(t *testing.T) {
	good := savedTracker(t)
	s := string(good)
	for _, c := range []struct{ old, new, want string }{
		{`"SyncTime":0.01`, `"SyncTime":null`, `types[0].observations[0].SyncTime: null for a float64`},
		{`"a":{"MinLocalBatch":8,"MaxLocalBatch":512}`, `"a":{"MinLocalBatch":8,"MaxLocalBatch":512},"a":{"MinLocalBatch":1,"MaxLocalBatch":2}`, `spec.Limits: key "a" given twice`},
		{`"MinLocalBatch":8`, `"MinLocalBatch":8,"MinLocalBatch":9`, `spec.Limits["a"]: key "MinLocalBatch" given twice`},
		{`"InitBatch":64`, `"InitBatch":64,"x":1`, `spec: unknown key "x"`},
		{`"refits":1`, `"refits":null`, `refits: null for a int`},
		{`"grad":{`, "\n" + `"grad":{"Sqr":1,`, `line 2:17, grad: key "Sqr" given twice`},
	} {
		require.Contains(t, s, c.old)
		var back bootstrap.Tracker
		err := json.Unmarshal([]byte(strings.Replace(s, c.old, c.new, 1)), &back)
		require.ErrorIs(t, err, bootstrap.ErrInvalidInput, c.new)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "line ")
	}
}

// TestProbeProfileFolderEntry: a folder where a profile file belongs
// (scalability-aws.csv made a directory by a bad copy) was skipped, so the
// type was simulated without its scalability rows; it is an error naming
// it. Folders of other names are still skipped, and so is a folder for a
// type the read does not want.
func TestProbeProfileFolderEntry(t *testing.T) {
	files := fstest.MapFS{
		"m/placements-aws.csv": {Data: []byte("placement,local_bsz,step_time,sync_time\n1,32,0.5,0.1\n")},
		"m/validation-32.csv":  {Data: []byte("progress,iteration,metric,grad_sqr,grad_var\n1,1,1,1,1\n")},
		"m/notes/readme.txt":   {Data: []byte("x")},
	}
	_, err := bootstrap.ReadModelFS(files, "m")
	require.NoError(t, err)
	for _, dir := range []string{"m/scalability-aws.csv", "m/placements-rtx.csv", "m/validation-64.csv"} {
		bad := maps.Clone(files)
		bad[dir+"/x"] = &fstest.MapFile{Data: []byte("x")}
		_, err := bootstrap.ReadModelFS(bad, "m")
		require.ErrorIs(t, err, bootstrap.ErrMalformed, dir)
		assert.Contains(t, err.Error(), dir+": a folder", dir)
	}
	bad := maps.Clone(files)
	bad["m/placements-rtx.csv/x"] = &fstest.MapFile{Data: []byte("x")}
	_, err = bootstrap.ReadModelFSWith(bad, "m", &bootstrap.ReadOptions{Types: []string{"aws"}})
	assert.NoError(t, err, "a type the read does not want")
}
