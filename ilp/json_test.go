package ilp_test

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goodJSON = `{"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},
 "jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0},
         {"id":"j1","options":[{"type":"a100","gpus":2,"value":0.5},{"type":"t4","gpus":4,"value":0.4}]}]}`

func TestParseJSONGood(t *testing.T) {
	p, meta, err := ilp.ParseJSON([]byte(goodJSON))
	require.NoError(t, err)
	assert.Equal(t, ilp.Minimize, p.Sense)
	assert.Equal(t, map[string]int{"t4": 24, "a100": 16}, p.Capacity)
	require.Len(t, p.Jobs, 2)
	assert.Equal(t, 0, p.Jobs[0].Pin)
	assert.Equal(t, -1, p.Jobs[1].Pin)
	assert.Equal(t, 1.1, p.Jobs[1].Unallocated)
	assert.Equal(t, ilp.Option{Type: "t4", GPUs: 4, Value: 0.4}, p.Jobs[1].Options[1])
	assert.Nil(t, meta.Optimum)

	_, meta, err = ilp.ParseJSON([]byte(`{"name":"r1","optimum":2.5,"sense":"max","unallocated":0,"capacity":{},"jobs":[]}`))
	require.NoError(t, err)
	assert.Equal(t, "r1", meta.Name)
	require.NotNil(t, meta.Optimum)
	assert.Equal(t, 2.5, *meta.Optimum)
}

// TestParseJSONBad: every malformed input gives an ErrInvalidInput (or
// ErrInfeasible) error whose message names the field, job or line.
func TestParseJSONBad(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		infeasible     bool
	}{
		{"empty", ``, "empty", false},
		{"garbage", "\x00\x01\xff binary", "malformed JSON", false},
		{"truncated", `{"sense":"min",`, "truncated", false},
		{"syntax line", "{\n\"sense\": \"min\",\n\"jobs\": [}\n", "line 3", false},
		{"trailing", `{"sense":"min","unallocated":1,"capacity":{},"jobs":[]} {}`, "after the JSON object", false},
		{"unknown key", `{"sense":"min","unallocated":1,"capacity":{},"jobs":[],"foo":1}`, `unknown field "foo"`, false},
		{"bad sense", `{"sense":"up","unallocated":1,"capacity":{},"jobs":[]}`, "sense", false},
		{"no sense", `{"unallocated":1,"capacity":{},"jobs":[]}`, "sense", false},
		{"no unallocated", `{"sense":"min","capacity":{},"jobs":[]}`, "unallocated", false},
		{"no capacity", `{"sense":"min","unallocated":1,"jobs":[]}`, "capacity", false},
		{"negative capacity", `{"sense":"min","unallocated":1,"capacity":{"t4":-1},"jobs":[]}`, `capacity["t4"]`, false},
		{"NaN", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":1,"value":NaN}]}]}`, "malformed JSON", false},
		{"huge", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":1,"value":1e999}]}]}`, "value", false},
		{"string value", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":1,"value":"x"}]}]}`, "jobs.options.value", false},
		{"duplicate id", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[]},{"id":"a","options":[]}]}`, `jobs[1] "a": duplicate`, false},
		{"empty id", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"","options":[]}]}`, "empty job ID", false},
		{"unknown type", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"v100","gpus":1,"value":1}]}]}`, `jobs[0] "a".options[0].type: unknown GPU type "v100"`, false},
		{"zero gpus", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":0,"value":1}]}]}`, "gpus", false},
		{"pin range", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":1,"value":1}],"pin":3}]}`, `jobs[0] "a".pin`, false},
		{"negative pin", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":1,"value":1}],"pin":-1}]}`, `jobs[0] "a".pin`, false},
		{"pins overflow", `{"sense":"min","unallocated":1,"capacity":{"t4":2},"jobs":[{"id":"a","options":[{"type":"t4","gpus":2,"value":1}],"pin":0},{"id":"b","options":[{"type":"t4","gpus":1,"value":1}],"pin":0}]}`, `pinned jobs need 3 GPUs`, true},
		{"off grid", `{"sense":"min","unallocated":1,"grid":0.01,"capacity":{"t4":1},"jobs":[{"id":"a","options":[{"type":"t4","gpus":1,"value":0.123}]}]}`, "not on the declared grid", false},
		{"reserved too big", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"reserved":{"t4":2},"jobs":[]}`, `reserved["t4"]`, false},
		{"quota unknown job", `{"sense":"min","unallocated":1,"capacity":{"t4":1},"jobs":[],"quotas":[{"name":"q","jobs":["x"],"type":"t4","limit":1}]}`, `unknown job "x"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ilp.ParseJSON([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
			if tc.infeasible {
				assert.ErrorIs(t, err, ilp.ErrInfeasible)
			} else {
				assert.ErrorIs(t, err, ilp.ErrInvalidInput)
			}
			var ie *ilp.InputError
			if !strings.Contains(tc.name, "empty") || errors.As(err, &ie) {
				assert.True(t, errors.As(err, &ie), "typed error")
			}
		})
	}
}

// TestJSONRoundTrip writes generated problems and reads them back.
func TestJSONRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		p := ilptest.Generate(ilptest.Config{Scale: 1, Jobs: 20, Seed: seed, Power: -0.5, PinFrac: 0.3})
		p.Reserved = map[string]int{"t4": 1}
		p.Quotas = []ilp.Quota{{Name: "q0", Jobs: []int{1, 3, 5}, Type: "a100", Limit: 16},
			{Name: "big-rtx", AllJobs: true, Type: "rtx", MinGPUs: 16, Limit: 32}}
		if p.Validate() != nil {
			p.Reserved = nil
		}
		require.NoError(t, p.Validate())
		var buf bytes.Buffer
		require.NoError(t, ilp.WriteJSON(&buf, p, ilp.Meta{Name: "x"}))
		q, meta, err := ilp.ParseJSON(buf.Bytes())
		require.NoError(t, err)
		assert.Equal(t, "x", meta.Name)
		assert.Equal(t, p, q)
	}
	p := &ilp.Problem{Capacity: map[string]int{}, Jobs: []ilp.Job{{ID: "a", Unallocated: 1, Pin: -1}, {ID: "b", Unallocated: 2, Pin: -1}}}
	err := ilp.WriteJSON(&bytes.Buffer{}, p, ilp.Meta{})
	require.ErrorIs(t, err, ilp.ErrInvalidInput)
	assert.Contains(t, err.Error(), `jobs[1] "b"`)
}

func TestValidateDirect(t *testing.T) {
	base := func() *ilp.Problem {
		return &ilp.Problem{Capacity: map[string]int{"t4": 4}, Jobs: []ilp.Job{{ID: "a", Pin: -1, Options: []ilp.Option{{Type: "t4", GPUs: 1, Value: 1}}}}}
	}
	for _, tc := range []struct {
		name string
		mod  func(p *ilp.Problem)
		want string
	}{
		{"nan unallocated", func(p *ilp.Problem) { p.Jobs[0].Unallocated = math.NaN() }, "unallocated"},
		{"inf value", func(p *ilp.Problem) { p.Jobs[0].Options[0].Value = math.Inf(1) }, "value"},
		{"bad sense", func(p *ilp.Problem) { p.Sense = 7 }, "sense"},
		{"negative grid", func(p *ilp.Problem) { p.Grid = -1 }, "grid"},
		{"quota type", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Type: "x"}} }, "quotas[0]"},
		{"quota dup", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Jobs: []int{0, 0}}} }, "listed twice"},
		{"quota negative", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Limit: -1}} }, "negative limit"},
		{"quota min_gpus", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", MinGPUs: -2}} }, `quotas[0] "q".min_gpus`},
		{"quota all_jobs with jobs", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Jobs: []int{0}}} }, "must be empty when all_jobs"},
		{"reserved unknown", func(p *ilp.Problem) { p.Reserved = map[string]int{"x": 1} }, "unknown GPU type"},
	} {
		p := base()
		tc.mod(p)
		err := p.Validate()
		require.ErrorIs(t, err, ilp.ErrInvalidInput, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
	require.NoError(t, base().Validate())
	var nilP *ilp.Problem
	require.ErrorIs(t, nilP.Validate(), ilp.ErrInvalidInput)
}

func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(goodJSON))
	f.Add([]byte(`{"sense":"max","unallocated":-1,"capacity":{"a":3},"jobs":[{"id":"x","options":[{"type":"a","gpus":2,"value":1.5}]}],"quotas":[{"name":"q","jobs":["x"],"limit":1}]}`))
	f.Add([]byte(`{"sense":"min","unallocated":1,"grid":0.01,"capacity":{"a":1},"reserved":{"a":1},"jobs":[]}`))
	f.Add([]byte("\xff\xfe"))
	f.Add([]byte(`{"sense":"min","Sense":"max","unallocated":1,"capacity":{},"jobs":[]}`))
	f.Add([]byte(`{"sense":"min","unallocated":1,"capacity":{"a":1,"a":2},"jobs":[]}`))
	f.Add([]byte(`{"sense":"max","unallocated":0,"capacity":{"a":4,"b":4},"jobs":[{"id":"x","options":[{"type":"a","gpus":2,"value":1}]}],"quotas":[{"name":"q","all_jobs":true,"types":["a","b"],"limit":2}]}`))
	f.Add([]byte(`{"sense":"min","unallocated":1,"grid":1000,"capacity":{"a":1},"jobs":[{"id":"x","options":[{"type":"a","gpus":1,"value":0.2}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, meta, err := ilp.ParseJSON(data)
		if err != nil {
			if !errors.Is(err, ilp.ErrInvalidInput) && !errors.Is(err, ilp.ErrInfeasible) {
				t.Fatalf("unclassified error %v", err)
			}
			var ie *ilp.InputError
			if !errors.As(err, &ie) && !strings.Contains(err.Error(), "reading") {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// every accepted problem is valid, solves to a feasible assignment
		// with the Solution invariants, and writes back to JSON (reading
		// the same problem) and LP
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid problem: %v", err)
		}
		sol, err := solveSmall(p)
		if err != nil {
			t.Fatal(err)
		}
		checkSolution(t, p, sol)
		var buf bytes.Buffer
		if err := ilp.WriteJSON(&buf, p, meta); err != nil {
			t.Fatal(err)
		}
		q, meta2, err := ilp.ParseJSON(buf.Bytes())
		if err != nil {
			t.Fatalf("written problem not read back: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(p, q) || meta.Name != meta2.Name {
			t.Fatalf("round trip changed the problem")
		}
		if err := ilp.WriteLP(&bytes.Buffer{}, p); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOnGrid(t *testing.T) {
	p := &ilp.Problem{Capacity: map[string]int{"a": 1}, Jobs: []ilp.Job{{ID: "x", Unallocated: 1.1, Pin: -1,
		Options: []ilp.Option{{Type: "a", GPUs: 1, Value: float64(float32(0.66))}}}}}
	assert.True(t, p.OnGrid(0.01), "single-precision 0.66 is on the grid")
	assert.False(t, p.OnGrid(0.1))
	assert.False(t, p.OnGrid(0))
	p.Jobs[0].Options[0].Value = 0.123
	assert.False(t, p.OnGrid(0.01))
}

// TestParseJSONKeys: keys that encoding/json would take silently (a
// repeated key keeps its last value; a key is matched whatever its case)
// are errors naming the key and line, in every object of the format, on
// both the fast path and the encoding/json path.
func TestParseJSONKeys(t *testing.T) {
	const base = `{"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},"grid":0.01,` +
		`"jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0},{"id":"j1","options":[]}],` +
		`"quotas":[{"name":"q","jobs":["j0"],"types":["t4"],"min_gpus":2,"limit":8}]}`
	_, _, err := ilp.ParseJSON([]byte(base))
	require.NoError(t, err)
	for _, tc := range []struct{ name, old, new, want string }{
		{"duplicate top", `"sense":"min"`, `"sense":"min","sense":"max"`, `duplicate key "sense"`},
		{"duplicate map", `{"t4":24,`, `{"t4":24,"t4":25,`, `duplicate key "t4"`},
		{"duplicate job", `"id":"j0",`, `"id":"j0","id":"j9",`, `duplicate key "id"`},
		{"duplicate option", `"gpus":1,`, `"gpus":1,"gpus":2,`, `duplicate key "gpus"`},
		{"duplicate quota", `"limit":8`, `"limit":8,"limit":9`, `duplicate key "limit"`},
		{"case top", `"sense"`, `"Sense"`, `key "Sense" must be spelled "sense"`},
		{"case option", `"gpus"`, `"GPUs"`, `key "GPUs" must be spelled "gpus"`},
		{"case job", `"pin"`, `"PIN"`, `key "PIN" must be spelled "pin"`},
		{"case quota", `"min_gpus"`, `"Min_GPUs"`, `key "Min_GPUs" must be spelled "min_gpus"`},
		{"case types", `"types"`, `"Types"`, `key "Types" must be spelled "types"`},
		{"escaped duplicate", `"sense":"min"`, `"sense":"min","s\u0065nse":"max"`, `duplicate key "sense"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(base, tc.old, tc.new, 1)
			require.NotEqual(t, base, in)
			_, _, err := ilp.ParseJSON([]byte(in))
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "line 1:")
		})
	}
	// map keys are data: their case is kept, only repeats are errors
	p, _, err := ilp.ParseJSON([]byte(strings.Replace(base, `"a100":16`, `"A100":16`, 1)))
	require.NoError(t, err)
	assert.Equal(t, 16, p.Capacity["A100"])
}
