package simtest_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
	"github.com/sia-sched/sia/sia/sim/simtest"
)

func TestRandomStateIsValidAndDeterministic(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	for seed := uint64(0); seed < 50; seed++ {
		s1, err := simtest.RandomState(rand.New(rand.NewPCG(seed, 1)), c, truth, nil)
		require.NoError(t, err)
		s2, err := simtest.RandomState(rand.New(rand.NewPCG(seed, 1)), c, truth, nil)
		require.NoError(t, err)
		require.Len(t, s2.Jobs, len(s1.Jobs))
		cur := map[string]sim.Alloc{}
		for i, j := range s1.Jobs {
			assert.Equal(t, j.Alloc(), s2.Jobs[i].Alloc())
			cur[j.Name()] = j.Alloc()
		}
		require.NoError(t, sim.CheckAllocations(s1, truth, cur), "the state's own allocations fit")
	}
}

// TestPoliciesOnRandomStates: Sia and Gavel return valid allocations on
// random states (the property test of docs/experiments.md, in small).
func TestPoliciesOnRandomStates(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	for seed := uint64(0); seed < 20; seed++ {
		s, err := simtest.RandomState(rand.New(rand.NewPCG(seed, 2)), c, truth, nil)
		require.NoError(t, err)
		sp, err := siapolicy.New(c, truth, siapolicy.Options{})
		require.NoError(t, err)
		for _, p := range []sim.Policy{sp, gavel.New(c, truth, 360)} {
			allocs, err := p.Schedule(context.Background(), s)
			require.NoError(t, err, p.Name())
			require.NoError(t, sim.CheckAllocations(s, truth, allocs), p.Name())
		}
	}
}

func TestNewJobAndStateRejectBadInput(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.NewCluster(sim.NodeGroup{Type: "t4", Nodes: 1, GPUsPerNode: 4})
	require.NoError(t, err)
	app, _ := truth.App("cifar10")
	spec := sim.JobSpec{Name: "c", App: "cifar10", Replicas: 1, Batch: 128}
	_, err = sim.NewJob(spec, app, sim.JobState{Progress: -1})
	assert.ErrorIs(t, err, sim.ErrInvalidInput)
	_, err = sim.NewJob(sim.JobSpec{App: "cifar10", Replicas: 1, Batch: 1}, app, sim.JobState{})
	assert.ErrorIs(t, err, sim.ErrInvalidInput)
	j, err := sim.NewJob(spec, app, sim.JobState{Alloc: sim.Alloc{Type: "t4", Nodes: []int{0, 0, 0, 0, 0}}})
	require.NoError(t, err)
	_, err = sim.NewState(60, 60, c, truth, j)
	var ie *sim.InputError
	require.ErrorAs(t, err, &ie, "five GPUs on a 4-GPU node")
	assert.Equal(t, "c", ie.Job)
	_, err = sim.NewState(60, 0.5, c, truth)
	assert.ErrorIs(t, err, sim.ErrInvalidInput)
}
