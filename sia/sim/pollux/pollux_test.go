package pollux

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

func TestPickType(t *testing.T) {
	assert.Equal(t, "t4", pickType(map[string]int{"t4": 8, "a100": 4}))
	assert.Equal(t, "a100", pickType(map[string]int{"t4": 4, "a100": 4}))
	assert.Equal(t, "rtx", pickType(map[string]int{"t4": 4, "rtx": 4}))
	assert.Equal(t, "x", pickType(map[string]int{"y": 2, "x": 2}))
}

func TestThreshold(t *testing.T) {
	assert.Equal(t, uint64(0), threshold(0))
	assert.Equal(t, uint64(math.MaxUint64), threshold(1))
	r := &wyrand{s: 1}
	hits := 0
	th := threshold(0.25)
	for i := 0; i < 100000; i++ {
		if r.next() < th {
			hits++
		}
	}
	assert.InDelta(t, 0.25, float64(hits)/100000, 0.01)
}

func TestPolluxShortRun(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(5, 0.5, 16)
	require.NoError(t, err)
	run := func(seed uint64) sim.Summary {
		p := New(c, m, Options{Seed: seed, Generations: 10})
		res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: 60, Batch: sim.PooledModel}, wl, p)
		require.NoError(t, err)
		return sim.Summarize([]*sim.Result{res})
	}
	a, b := run(1), run(1)
	assert.Equal(t, 0, a.Unfinished)
	assert.Equal(t, a.JCTs, b.JCTs, "same seed, same result")
	// The search splits work over goroutines; the result must not depend
	// on how many.
	prev := runtime.GOMAXPROCS(1)
	c1 := run(1)
	runtime.GOMAXPROCS(prev)
	assert.Equal(t, a.JCTs, c1.JCTs, "same result with one worker")
}

// BenchmarkPolluxRound measures one Pollux round (100 generations) with 30
// active jobs on the 64-GPU heterogeneous cluster.
func BenchmarkPolluxRound(b *testing.B) {
	c, _ := sim.ParseCluster("heterogeneous", 1)
	m, err := sim.LoadModel()
	require.NoError(b, err)
	wl, err := sim.Generate(9, 8, 20)
	require.NoError(b, err)
	wl.Jobs = wl.Jobs[:30]
	for i := range wl.Jobs {
		wl.Jobs[i].Submit = 0
	}
	// Capture the state of the first round and replay it.
	var state *sim.State
	grab := policyFunc(func(s *sim.State) { state = s })
	_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, MaxTime: 60}, wl, grab)
	require.NoError(b, err)
	require.NotNil(b, state)
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		p := New(c, m, Options{Seed: 1})
		if _, err := p.Schedule(context.Background(), state); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

type policyFunc func(*sim.State)

func (f policyFunc) Name() string { return "grab" }
func (f policyFunc) Schedule(_ context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	f(s)
	return nil, nil
}

// TestCarryOverFront checks that a round hands only its non-dominated front
// to the next round's search (the published baseline keeps pymoo's result.X),
// unless CarryPopulation asks for the whole final population.
func TestCarryOverFront(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(9, 8, 20)
	require.NoError(t, err)
	wl.Jobs = wl.Jobs[:30]
	for i := range wl.Jobs {
		wl.Jobs[i].Submit = 0
	}
	var state *sim.State
	grab := policyFunc(func(s *sim.State) { state = s })
	_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, MaxTime: 60}, wl, grab)
	require.NoError(t, err)
	require.NotNil(t, state)
	schedule := func(opt Options) *Policy {
		p := New(c, m, opt)
		_, err := p.Schedule(context.Background(), state)
		require.NoError(t, err)
		return p
	}
	front := schedule(Options{Seed: 3, Generations: 20})
	all := schedule(Options{Seed: 3, Generations: 20, CarryPopulation: true})
	require.Len(t, all.prevPop, 100, "the whole final population")
	require.NotEmpty(t, front.prevPop)
	assert.Less(t, len(front.prevPop), len(all.prevPop), "only the front is carried over")
	members := map[string]bool{}
	for _, x := range all.prevPop {
		members[string(int8Bytes(x))] = true
	}
	for _, x := range front.prevPop {
		assert.True(t, members[string(int8Bytes(x))], "the front is part of the same final population")
	}
}
