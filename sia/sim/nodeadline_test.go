package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ctxPolicy runs every job on one GPU of type a and records, per Schedule
// call, whether its context had a deadline; it calls hook (if set) with the
// call's number.
type ctxPolicy struct {
	deadlines []bool
	hook      func(call int)
}

func (p *ctxPolicy) Name() string { return "ctx" }
func (p *ctxPolicy) Schedule(ctx context.Context, st *State) (map[string]Alloc, error) {
	_, ok := ctx.Deadline()
	p.deadlines = append(p.deadlines, ok)
	if p.hook != nil {
		p.hook(len(p.deadlines))
	}
	out := map[string]Alloc{}
	for i, j := range st.Jobs {
		out[j.Name()] = Alloc{Type: "a", Nodes: []int{i % 2}}
	}
	return out, nil
}

// TestRunGivesPoliciesNoDeadline: a policy's Schedule never sees a
// deadline, even when Run's ctx has one (the simulated rounds must not
// depend on the machine's speed), and the result is that of a run without
// one.
func TestRunGivesPoliciesNoDeadline(t *testing.T) {
	wl := &Workload{Name: "w", Jobs: []JobSpec{{Name: "j0", App: "toy", Replicas: 1, Batch: 10}, {Name: "j1", App: "toy", Replicas: 1, Batch: 10, Submit: 90}}}
	cfg := Config{Cluster: toyCluster, Truth: toyTruth{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	var with, without ctxPolicy
	a, err := Run(ctx, cfg, wl, &with)
	require.NoError(t, err)
	b, err := Run(context.Background(), cfg, wl, &without)
	require.NoError(t, err)
	require.NotEmpty(t, with.deadlines)
	assert.NotContains(t, with.deadlines, true, "a Schedule call saw Run's deadline")
	assert.Equal(t, b.Jobs, a.Jobs)
}

// TestRunCancelledMidRound: cancelling Run's context during a Schedule
// call ends the run with the context's error and no result (the round it
// cut short never enters one), though Schedule's context has no deadline.
func TestRunCancelledMidRound(t *testing.T) {
	wl := &Workload{Name: "w", Jobs: []JobSpec{{Name: "j0", App: "toy", Replicas: 1, Batch: 10}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	pol := &ctxPolicy{hook: func(call int) {
		if call == 2 {
			cancel()
		}
	}}
	res, err := Run(ctx, Config{Cluster: toyCluster, Truth: toyTruth{}}, wl, pol)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, res)
	assert.Len(t, pol.deadlines, 2, "no Schedule call after the cancellation")
	assert.Equal(t, []bool{false, false}, pol.deadlines)
}
