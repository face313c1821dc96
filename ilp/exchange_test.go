package ilp

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExchangePaysForAMove: a queued job worth much more than the last GPU
// of a running one gets it. Every greedy that keeps the running job on two
// GPUs (the only GPUs there are) leaves the queued job out; the exchange
// move shrinks the running job to one GPU and starts the queued one.
func TestExchangePaysForAMove(t *testing.T) {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": 2, "b": 1}, Jobs: []Job{
		{ID: "run", Pin: -1, Options: []Option{{Type: "a", GPUs: 1, Value: 0.9}, {Type: "a", GPUs: 2, Value: 1}}},
		{ID: "queued", Pin: -1, Options: []Option{{Type: "a", GPUs: 1, Value: 5}, {Type: "b", GPUs: 1, Value: 0.5}}},
		{ID: "other", Pin: -1, Options: []Option{{Type: "b", GPUs: 1, Value: 3}}},
	}}
	require.NoError(t, p.Validate())
	m := newModel(p)
	sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
	// run on two GPUs of a, other on b, queued out
	choice := []int{1, -1, 0}
	require.True(t, sr.feasible(choice))
	require.True(t, sr.exchange(m.allJobs(), m.cap, choice))
	assert.Equal(t, []int{0, 0, 0}, choice)
	assert.InDelta(t, 8.9, sr.profit(choice), 1e-12)
}

// TestExchangeProperty: on random small problems (quotas with MinGPUs
// thresholds included), from the greedy incumbent and from every job
// unallocated, the exchange keeps the choice feasible, never lowers its
// profit, reports an improvement exactly when it made one, and never
// exceeds the brute-force optimum.
func TestExchangeProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	improved := 0
	for trial := range 600 {
		p := randomCoreProblem(rng, trial%2 == 0)
		require.NoError(t, p.Validate())
		m := newModel(p)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		free := m.allJobs()
		lam := make([]float64, m.nrows)
		_, opt := bruteForceModel(m)
		for _, start := range [][]int{sr.quickGreedy(free, m.cap, lam, nil), noneChoice(len(free))} {
			before := sr.profit(start)
			c := append([]int(nil), start...)
			ok := sr.exchange(free, m.cap, c)
			require.True(t, sr.feasible(c), "trial %d", trial)
			after := sr.profit(c)
			require.GreaterOrEqual(t, after, before-1e-12)
			require.LessOrEqual(t, after, opt+1e-9, "trial %d", trial)
			require.Equal(t, ok, after > before+sr.eqTol, "trial %d", trial)
			if ok {
				improved++
			}
		}
	}
	assert.Greater(t, improved, 50, "the exchange should improve some starts")
}

func noneChoice(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = -1
	}
	return c
}

// bruteForceModel returns the best feasible model choice by enumeration.
func bruteForceModel(m *model) ([]int, float64) {
	n := len(m.jobs)
	cur := noneChoice(n)
	best, bestP := append([]int(nil), cur...), 0.0
	sr := &search{m: m}
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			if sr.feasible(cur) {
				if pv := sr.profit(cur); pv > bestP {
					bestP = pv
					best = append(best[:0], cur...)
				}
			}
			return
		}
		for o := -1; o < len(m.jobs[i].opts); o++ {
			cur[i] = o
			rec(i + 1)
		}
		cur[i] = -1
	}
	rec(0)
	return best, bestP
}
