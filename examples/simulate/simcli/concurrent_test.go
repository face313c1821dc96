package simcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

// TestParallelSameOutcomes runs the same policies one after another and
// concurrently: every metric but the wall-clock ones must be equal, and the
// lines must come in -policy order.
func TestParallelSameOutcomes(t *testing.T) {
	wl := writeWorkload(t, small)
	run := func(parallel string) []map[string]any {
		var out, errb bytes.Buffer
		require.NoError(t, Run(context.Background(), []string{"-workload", wl, "-policy", "gavel,sia,pollux,sia-rigid",
			"-json", "-parallel", parallel}, &out, &errb), errb.String())
		var rows []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			for _, k := range []string{"policy_ms_median", "policy_ms_p95", "sim_wall_s"} {
				delete(m, k)
			}
			rows = append(rows, m)
		}
		return rows
	}
	serial, par := run("1"), run("4")
	require.Len(t, serial, 4)
	assert.Equal(t, serial, par)
	for i, name := range []string{"gavel", "sia", "pollux", "sia-rigid"} {
		assert.Equal(t, name, par[i]["policy"])
	}
}

func TestParallelBadValueAndFailure(t *testing.T) {
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-parallel", "0"}, &out, &errb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-parallel 0")

	// A failing constructor stops the run with its own error, not with the
	// cancellation of the others.
	r := Builtin()
	require.NoError(t, r.Register(Policy{Name: "broken", New: func(Env) (sim.Policy, error) { return nil, errBroken }}))
	err = r.Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "sia,broken,gavel", "-noftf", "-parallel", "3"}, &out, &errb)
	require.ErrorIs(t, err, errBroken)
}

var errBroken = errors.New("broken on purpose")

func TestTableExplainsColumns(t *testing.T) {
	var out, errb bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "gavel,sia-rigid", "-noftf"}, &out, &errb), errb.String())
	s := out.String()
	assert.Contains(t, s, "What was compared")
	assert.Contains(t, s, "lower is better")
	assert.Contains(t, s, "Gavel: rigid jobs")
	assert.Regexp(t, `Lowest average JCT: (gavel|sia-rigid) \([0-9.]+ h\); (gavel|sia-rigid) [0-9.]+x\.`, s)
}
