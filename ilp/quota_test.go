package ilp_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quotaTypesProblem: three jobs that each prefer 8 GPUs of a100 or h100 and
// can fall back to t4; a quota over {a100, h100} holds them to 8 GPUs in
// total across both types.
func quotaTypesProblem() *ilp.Problem {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a100": 8, "h100": 8, "t4": 8}}
	for _, id := range []string{"x", "y", "z"} {
		p.Jobs = append(p.Jobs, ilp.Job{ID: id, Pin: -1, Options: []ilp.Option{
			{Type: "a100", GPUs: 8, Value: 4}, {Type: "h100", GPUs: 8, Value: 5}, {Type: "t4", GPUs: 8, Value: 1},
		}})
	}
	p.Quotas = []ilp.Quota{{Name: "fast", AllJobs: true, Types: []string{"a100", "h100"}, Limit: 8}}
	return p
}

// TestQuotaTypes: a quota over a set of types counts exactly the options
// whose type is listed (coefficient GPUs) in Counts, Check and Solve.
func TestQuotaTypes(t *testing.T) {
	p := quotaTypesProblem()
	q := &p.Quotas[0]
	assert.True(t, q.Counts(ilp.Option{Type: "a100", GPUs: 1}))
	assert.True(t, q.Counts(ilp.Option{Type: "h100", GPUs: 8}))
	assert.False(t, q.Counts(ilp.Option{Type: "t4", GPUs: 8}))
	q.MinGPUs = 2
	assert.False(t, q.Counts(ilp.Option{Type: "a100", GPUs: 1}), "MinGPUs still applies")
	q.MinGPUs = 0

	require.Error(t, p.Check([]int{0, 1, 2}), "a100 and h100 together exceed the set's limit")
	require.NoError(t, p.Check([]int{1, 2, -1}))
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	require.Equal(t, ilp.Optimal, sol.Status)
	assert.InDelta(t, 6.0, sol.Objective, 1e-12, "one job on h100, one on t4 (only one fits there)")
	require.NoError(t, p.Check(sol.Assignment))
	_, want, ok := ilptest.BruteForce(p)
	require.True(t, ok)
	assert.InDelta(t, want, sol.Objective, 1e-12)

	// without the quota two jobs take the fast types
	p.Quotas = nil
	sol, err = ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.InDelta(t, 10.0, sol.Objective, 1e-12)
}

// TestQuotaTypesValidate: unknown, duplicate or empty types and Type set
// together with Types are errors naming the quota and entry.
func TestQuotaTypesValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     ilp.Quota
		want  string
		valid bool
	}{
		{"unknown", ilp.Quota{Name: "q", Types: []string{"a100", "v100"}}, `quotas[0] "q".types[1]: unknown GPU type "v100"`, false},
		{"duplicate", ilp.Quota{Name: "q", Types: []string{"t4", "a100", "t4"}}, `quotas[0] "q".types[2]: GPU type "t4" listed twice`, false},
		{"empty name", ilp.Quota{Name: "q", Types: []string{""}}, `quotas[0] "q".types[0]: unknown GPU type ""`, false},
		{"with type", ilp.Quota{Name: "q", Type: "t4", Types: []string{"a100"}}, `quotas[0] "q".types: must be empty when type is set`, false},
		{"one type", ilp.Quota{Name: "q", Types: []string{"t4"}, Limit: 8}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := quotaTypesProblem()
			p.Quotas = []ilp.Quota{tc.q}
			err := p.Validate()
			if tc.valid {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// pins over a set-of-types quota are infeasible
	p := quotaTypesProblem()
	p.Jobs[0].Pin, p.Jobs[1].Pin = 0, 1
	require.ErrorIs(t, p.Validate(), ilp.ErrInfeasible)
}

// TestQuotaTypesFormats: Types survives the JSON round trip (both readers)
// and appears in the LP file's row and comment.
func TestQuotaTypesFormats(t *testing.T) {
	p := quotaTypesProblem()
	p.Quotas[0].AllJobs = false
	p.Quotas[0].Jobs = []int{0, 2}
	var buf bytes.Buffer
	require.NoError(t, ilp.WriteJSON(&buf, p, ilp.Meta{}))
	assert.Contains(t, buf.String(), `"types":["a100","h100"]`)
	q, _, err := ilp.ParseJSON(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, p, q)
	// the encoding/json path (a space-escaped key sends it there)
	slow := strings.Replace(buf.String(), `"types"`, `"typ\u0065s"`, 1)
	q, _, err = ilp.ParseJSON([]byte(slow))
	require.NoError(t, err)
	assert.Equal(t, p, q)

	var lp bytes.Buffer
	require.NoError(t, ilp.WriteLP(&lp, p))
	assert.Contains(t, lp.String(), `type "a100,h100"`)
	// the row counts jobs 0 and 2 on a100 and h100 only: options 0 and 1
	assert.Contains(t, lp.String(), "quota0: 8 x0_0 + 8 x0_1 + 8 x2_0 + 8 x2_1 <= 8")
}
