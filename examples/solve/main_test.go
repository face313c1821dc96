package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestSolveGood(t *testing.T) {
	in := write(t, "r.json", `{"name":"r","optimum":1.81,"sense":"min","unallocated":1.1,"capacity":{"t4":2,"a100":1},
	 "jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0},
	         {"id":"j1","options":[{"type":"t4","gpus":2,"value":0.5},{"type":"a100","gpus":1,"value":0.6}]},
	         {"id":"j2","options":[{"type":"a100","gpus":4,"value":0.1}]}]}`)
	lp := filepath.Join(t.TempDir(), "r.lp")
	var out, errb bytes.Buffer
	code := run([]string{"-in", in, "-lp", lp, "-timeout", "5s"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	var got struct {
		Status     string         `json:"status"`
		Objective  float64        `json:"objective"`
		Bound      float64        `json:"bound"`
		Assignment map[string]int `json:"assignment"`
		SolveMS    *float64       `json:"solve_ms"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, "optimal", got.Status)
	assert.InDelta(t, 0.71+0.6+1.1, got.Objective, 1e-9)
	assert.Equal(t, got.Objective, got.Bound)
	assert.Equal(t, map[string]int{"j0": 0, "j1": 1, "j2": -1}, got.Assignment)
	require.NotNil(t, got.SolveMS)
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), "one JSON object on one line")
	b, err := os.ReadFile(lp)
	require.NoError(t, err)
	assert.Contains(t, string(b), "Minimize")
}

func TestSolveEdgeCases(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"no jobs", `{"sense":"max","unallocated":0,"capacity":{"t4":4},"jobs":[]}`},
		{"larger than cluster", `{"sense":"min","unallocated":1.1,"capacity":{"t4":4},"jobs":[{"id":"big","options":[{"type":"t4","gpus":64,"value":0.1}]}]}`},
	} {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run([]string{"-in", write(t, "x.json", tc.in)}, &out, &errb), tc.name+": "+errb.String())
		assert.Contains(t, out.String(), `"status":"optimal"`, tc.name)
	}
}

func TestSolveBadInput(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"malformed", `{"sense":`, "truncated"},
		{"garbage", "\x89PNG\r\n\x1a\n\x00\x00", "malformed JSON"},
		{"negative capacity", `{"sense":"min","unallocated":1,"capacity":{"t4":-4},"jobs":[]}`, `capacity["t4"]`},
		{"duplicate", `{"sense":"min","unallocated":1,"capacity":{"t4":4},"jobs":[{"id":"a","options":[]},{"id":"a","options":[]}]}`, `"a": duplicate`},
		{"NaN", `{"sense":"min","unallocated":NaN,"capacity":{"t4":4},"jobs":[]}`, "malformed JSON"},
		{"unknown key", `{"sense":"min","unallocated":1,"capacity":{},"jobs":[],"extra":true}`, `unknown field "extra"`},
		{"pins", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":2,"value":1}],"pin":0}]}`, "pinned jobs need 2 GPUs"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"-in", write(t, "bad.json", tc.in)}, &out, &errb)
		assert.Equal(t, 1, code, tc.name)
		assert.Contains(t, errb.String(), tc.want, tc.name)
		assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "%s: one line: %q", tc.name, errb.String())
	}
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"-in", filepath.Join(t.TempDir(), "missing.json")}, &out, &errb))
	assert.Contains(t, errb.String(), "missing.json")
	errb.Reset()
	assert.Equal(t, 2, run([]string{}, &out, &errb))
	assert.Equal(t, 2, run([]string{"-timeout", "soon", "-in", "x"}, &out, &errb))
	// Bad flags: exit 2 and exactly one line on stderr naming the flag.
	for _, args := range [][]string{{"-bogus"}, {"-timeout", "soon", "-in", "x"}, {"-grid", "x"}, {"-in"}} {
		errb.Reset()
		assert.Equal(t, 2, run(args, &out, &errb), "%v", args)
		assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "%v: %q", args, errb.String())
		assert.True(t, strings.HasPrefix(errb.String(), "solve: "), "%v: %q", args, errb.String())
	}
	errb.Reset()
	out.Reset()
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errb))
	assert.Contains(t, out.String(), "-in")
}

// TestSolveGridAuto: values on the 0.01 grid are solved with the grid unless
// -grid 0 turns it off; both give the same optimum.
func TestSolveGridAuto(t *testing.T) {
	in := write(t, "g.json", `{"sense":"min","unallocated":1.1,"capacity":{"t4":3},"jobs":[
	 {"id":"a","options":[{"type":"t4","gpus":1,"value":0.7},{"type":"t4","gpus":2,"value":0.5}]},
	 {"id":"b","options":[{"type":"t4","gpus":1,"value":0.6},{"type":"t4","gpus":2,"value":0.45}]}]}`)
	var objs []float64
	for _, args := range [][]string{{"-in", in}, {"-in", in, "-grid", "0"}} {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run(args, &out, &errb), errb.String())
		var got struct {
			Status    string  `json:"status"`
			Objective float64 `json:"objective"`
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &got))
		assert.Equal(t, "optimal", got.Status)
		objs = append(objs, got.Objective)
	}
	assert.InDelta(t, 1.1, objs[0], 1e-9) // 0.5 + 0.6
	assert.Equal(t, objs[0], objs[1])
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"-in", in, "-grid", "0.3"}, &out, &errb))
	assert.Contains(t, errb.String(), "not on the declared grid")
}
