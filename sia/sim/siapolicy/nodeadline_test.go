package siapolicy

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

// TestSimulatedRoundsHaveNoDeadline: the scheduler New builds runs its
// rounds without a deadline and with the deterministic node limit, whatever
// options it is given; options asking for a wall-clock bound are refused,
// naming the field.
func TestSimulatedRoundsHaveNoDeadline(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		sia      *sia.Options
		maxNodes int
	}{
		{"nil", nil, DefaultSolverMaxNodes},
		{"paper", &sia.Options{}, DefaultSolverMaxNodes},
		{"no timeout", &sia.Options{RoundTimeout: -1, SolverMaxNodes: 500}, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(c, m, Options{Sia: tc.sia})
			require.NoError(t, err)
			s, ok := p.sched.(*sia.Scheduler)
			require.True(t, ok)
			assert.Negative(t, s.Options().RoundTimeout, "a simulated round has a deadline")
			assert.Zero(t, s.Options().SolverDeadline)
			assert.Equal(t, tc.maxNodes, s.Options().SolverMaxNodes)
		})
	}
	for _, tc := range []struct {
		field string
		sia   *sia.Options
	}{
		{"RoundTimeout", &sia.Options{RoundTimeout: time.Second}},
		{"SolverDeadline", &sia.Options{SolverDeadline: time.Millisecond}},
	} {
		_, err := New(c, m, Options{Sia: tc.sia})
		require.ErrorIs(t, err, sia.ErrInvalidInput, tc.field)
		assert.Contains(t, err.Error(), "Options.Sia."+tc.field)
	}
}

// TestSimulationIndependentOfTheClock: a round that the machine runs
// slowly (a matrix step that takes longer than sia's default round timeout:
// a host's round would be out of time and fall back to a greedy plan) gives
// the simulation the same per-job results as one that runs at full speed.
// It sleeps past DefaultRoundTimeout once; skipped with -short.
func TestSimulationIndependentOfTheClock(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps past sia.DefaultRoundTimeout")
	}
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(3, 0.5, 20)
	require.NoError(t, err)
	run := func(obs func(sia.Event)) []sim.JobResult {
		p, err := New(c, m, Options{Sia: &sia.Options{Artifact: sia.PublishedArtifact(), Observer: obs}})
		require.NoError(t, err)
		res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m}, wl, p)
		require.NoError(t, err)
		return res.Jobs
	}
	var slept atomic.Bool
	slow := run(func(e sia.Event) {
		if e.Stage == sia.StageMatrix && e.Jobs >= 2 && !slept.Swap(true) {
			time.Sleep(sia.DefaultRoundTimeout + 200*time.Millisecond)
		}
	})
	require.True(t, slept.Load())
	fast := run(nil)
	assert.Equal(t, fast, slow)
}
