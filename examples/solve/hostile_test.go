package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// TestHostileFlags: grid values that are not a step are refused, naming
// the flag, instead of being taken as "not given".
func TestHostileFlags(t *testing.T) {
	in := write(t, "x.json", `{"sense":"max","unallocated":0,"capacity":{"a":1},"jobs":[]}`)
	for _, g := range []string{"NaN", "-0.5", "-Inf", "+Inf"} {
		var out, errb bytes.Buffer
		code := run([]string{"-in", in, "-grid", g}, &out, &errb)
		assert.NotEqual(t, 0, code, "-grid %s accepted", g)
		assert.Contains(t, errb.String(), "-grid", g)
	}
	var out, errb bytes.Buffer
	assert.NotEqual(t, 0, run([]string{"-in", in, "-timeout", "-1s"}, &out, &errb), "negative -timeout")
	assert.Contains(t, errb.String(), "-timeout")
}

// TestHostileUnknownBound: a solve cut short before any bound is known
// prints "bound": null, never the objective (which would read as a proven
// gap of zero).
func TestHostileUnknownBound(t *testing.T) {
	p := ilptest.Hard(ilptest.HardConfig{Jobs: 4000, GPUs: 8000, Types: 4, Seed: 5, Power: 0.5})
	in := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(in)
	require.NoError(t, err)
	require.NoError(t, ilp.WriteJSON(f, p, ilp.Meta{}))
	require.NoError(t, f.Close())
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"-in", in, "-timeout", "1ns", "-grid", "0"}, &out, &errb), errb.String())
	var got struct {
		Status    string   `json:"status"`
		Objective float64  `json:"objective"`
		Bound     *float64 `json:"bound"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, "feasible", got.Status)
	if got.Bound != nil {
		assert.NotEqual(t, got.Objective, *got.Bound, "a feasible solve printed bound = objective")
	}
}
