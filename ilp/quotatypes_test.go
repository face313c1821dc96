package ilp_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuotaOverTypes: a quota over a set of types counts the GPUs of all of
// them (here two pools of one GPU type share 8 GPUs between them).
func TestQuotaOverTypes(t *testing.T) {
	p := &ilp.Problem{
		Sense:    ilp.Maximize,
		Capacity: map[string]int{"a/8": 8, "a/6": 6, "b": 4},
		Jobs: []ilp.Job{
			{ID: "x", Options: []ilp.Option{{Type: "a/8", GPUs: 8, Value: 5}}, Pin: -1},
			{ID: "y", Options: []ilp.Option{{Type: "a/6", GPUs: 6, Value: 4}}, Pin: -1},
			{ID: "z", Options: []ilp.Option{{Type: "b", GPUs: 4, Value: 1}}, Pin: -1},
		},
		Quotas: []ilp.Quota{{Name: "a", AllJobs: true, Types: []string{"a/8", "a/6"}, Limit: 8}},
	}
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.Equal(t, ilp.Optimal, sol.Status)
	assert.Equal(t, []int{0, -1, 0}, sol.Assignment)
	assert.InDelta(t, 6, sol.Objective, 1e-9)
	// JSON keeps the set
	var buf bytes.Buffer
	require.NoError(t, ilp.WriteJSON(&buf, p, ilp.Meta{}))
	q, _, err := ilp.ParseJSON(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, []string{"a/8", "a/6"}, q.Quotas[0].Types)
	// bad sets are errors
	for _, bad := range []ilp.Quota{
		{Types: []string{"a/8", "zz"}, Limit: 1},
		{Types: []string{"a/8", "a/8"}, Limit: 1},
		{Type: "b", Types: []string{"a/8"}, Limit: 1},
	} {
		p.Quotas = []ilp.Quota{bad}
		_, err := ilp.Solve(context.Background(), p, nil)
		require.ErrorIs(t, err, ilp.ErrInvalidInput, "%+v", bad)
		assert.Contains(t, err.Error(), "types")
	}
}
