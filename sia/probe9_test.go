package sia_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// TestProbe9WholeNodeFleet runs a host loop on a fleet where every count
// the solver sees shares a factor (nodes of 8, 16 and 24 GPUs; rigid jobs
// of whole nodes, adaptive jobs of at least 8 GPUs in steps the nodes
// allow), so that ilp counts the model in units of the factor
// (divideCounts): every plan passes probeCheck (no double booking, shapes
// as evaluated, bounds, pins, reasons), rounds without a deadline are
// optimal, and jobs start.
func TestProbe9WholeNodeFleet(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	snap := sia.Snapshot{Now: probeT0}
	for i := 0; i < 4; i++ {
		snap.Nodes = append(snap.Nodes, sia.Node{ID: fmt.Sprint("a", i), Type: "A", GPUs: 8})
	}
	for i := 0; i < 2; i++ {
		snap.Nodes = append(snap.Nodes, sia.Node{ID: fmt.Sprint("b", i), Type: "B", GPUs: 16})
	}
	snap.Nodes = append(snap.Nodes, sia.Node{ID: "c0", Type: "C", GPUs: 24})
	model := probeModel{speed: map[string]float64{"A": 1, "B": 1.5, "C": 2}, gain: 0.8, cross: 0.9}
	next := 0
	add := func() {
		j := sia.Job{ID: fmt.Sprint("j", next), Models: model, Submitted: snap.Now}
		next++
		switch rng.IntN(4) {
		case 0:
			j.Kind, j.GPUs = sia.Rigid, []int{8, 16, 24, 32}[rng.IntN(4)]
		case 1:
			j.MinGPUs, j.MaxGPUs = 8, []int{16, 24, 48}[rng.IntN(3)]
		case 2:
			j.Kind, j.MinGPUs, j.MaxGPUs = sia.StrongScaling, 8, 64
		default:
			j.MinGPUs, j.Types = 8, []string{"B", "C"}
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	for range 8 {
		add()
	}
	started, optimal, rounds := 0, 0, 0
	for round := 0; round < 40; round++ {
		ctx, cancel := context.Background(), func() {}
		d := []time.Duration{0, 0, -1, time.Millisecond, 20 * time.Millisecond}[round%5]
		if d != 0 {
			ctx, cancel = context.WithTimeout(context.Background(), d)
		}
		plan, err := s.Round(ctx, snap)
		cancel()
		require.NoError(t, err, "round %d", round)
		probeCheck(t, snap, s.Options(), plan)
		rounds++
		if d == 0 && plan.Status == sia.StatusOptimal {
			optimal++
		}
		for _, dec := range plan.Decisions {
			if dec.Action == sia.Start {
				started++
			}
		}
		snap.Advance(&plan, snap.Now.Add(time.Minute))
		// churn: finish a few running jobs, submit new ones
		kept := snap.Jobs[:0]
		for _, j := range snap.Jobs {
			if j.State.Current.Running() && rng.IntN(6) == 0 {
				continue
			}
			kept = append(kept, j)
		}
		snap.Jobs = kept
		for k := rng.IntN(3); k > 0; k-- {
			add()
		}
	}
	t.Logf("%d rounds, %d optimal of the %d without a deadline, %d starts", rounds, optimal, 16, started)
	assert.Equal(t, 16, optimal)
	assert.Greater(t, started, 10)
}
