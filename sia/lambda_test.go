package sia

import (
	"context"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomTable returns concave goodputs on each type, powers of two up to
// 16 replicas; a type may have no model (absent).
func randomTable(rng *rand.Rand, types []string) siatest.Table {
	tab := siatest.Table{}
	for _, ty := range types {
		if rng.IntN(5) == 0 {
			continue // no model yet
		}
		row := map[int]float64{}
		g := 0.5 + rng.Float64()
		for r := 1; r <= 16; r *= 2 {
			row[r] = g
			g *= 1 + rng.Float64() // at most linear
		}
		tab[ty] = row
	}
	return tab
}

// randomLambdaRound returns a snapshot after one round: some jobs run,
// new ones are queued.
func randomLambdaRound(t *testing.T, rng *rand.Rand, opts Options) Snapshot {
	types := []string{"A", "B", "C"}[:1+rng.IntN(3)]
	var cl []Node
	for _, ty := range types {
		per := []int{1, 2, 4, 8}[rng.IntN(4)]
		for n := 1 + rng.IntN(2); n > 0; n-- {
			cl = append(cl, Node{ID: fmt.Sprintf("%s%d", ty, n), Type: ty, GPUs: per})
		}
	}
	now := t0.Add(time.Hour)
	snap := Snapshot{Now: now, Nodes: cl}
	add := func(n int) {
		for ; n > 0; n-- {
			j := Job{ID: fmt.Sprintf("j%d", len(snap.Jobs)), Submitted: now.Add(-time.Duration(rng.IntN(3600)) * time.Second), Models: randomTable(rng, types)}
			if rng.IntN(4) == 0 {
				j.MinGPUs = 2
			}
			snap.Jobs = append(snap.Jobs, j)
		}
	}
	add(1 + rng.IntN(4))
	s, err := New(&opts)
	require.NoError(t, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	applyPlan(&snap, &p, time.Minute)
	add(1 + rng.IntN(4))
	return snap
}

// TestLambdaGuarantee is the property the Options.Lambda doc states, over
// random rounds: with p > 0, or p < 0 and |λ| > 1, a job that would not be
// restarted (queued, or running on its current configuration) has every
// valid configuration offered (none dominated by waiting), and an optimal
// allocation never leaves it waiting while one of them fits what the
// allocation leaves free (every capacity, reservation and quota row).
func TestLambdaGuarantee(t *testing.T) {
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	waited, checked := 0, 0
	for seed := 0; seed < rounds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		opts := Options{NoScaleUpCap: rng.IntN(2) == 0}
		if rng.IntN(4) == 0 {
			opts.P = 0.1 + rng.Float64()
			opts.Lambda = -(0.01 + 2*rng.Float64()) // any λ < 0 for p > 0
		} else {
			opts.P = -(0.1 + rng.Float64())
			opts.Lambda = 1 + 1e-3 + 2*rng.Float64()
		}
		if rng.IntN(4) == 0 {
			opts.Artifact = PublishedArtifact()
			opts.Lambda = math.Copysign(math.Max(math.Abs(opts.Lambda), 1.02), opts.Lambda) // beyond the grid's rounding
		}
		snap := randomLambdaRound(t, rng, opts)
		if rng.IntN(3) == 0 {
			snap.Quotas = []Quota{{Name: "q", Jobs: []string{snap.Jobs[0].ID}, Limit: rng.IntN(3)}}
		}
		s, err := New(&opts)
		require.NoError(t, err)
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		require.Equal(t, StatusOptimal, p.Status)
		prob, optIdx := p.matrix.problem(nil)
		assign := make([]int, len(p.matrix.Rows))
		for i := range p.Decisions {
			assign[i] = -1
			for k, e := range optIdx[i] {
				if p.entries[i] == e && e >= 0 {
					assign[i] = k
				}
			}
		}
		require.NoError(t, prob.Check(assign))
		for i := range p.matrix.Rows {
			row := &p.matrix.Rows[i]
			for k := range row.Entries {
				e := &row.Entries[k]
				if e.Invalid || e.Restart != 1 {
					continue // a filler, or a configuration the job would restart on
				}
				checked++
				require.False(t, e.Dominated || e.Dropped, "seed %d job %s: %v valued %v, λ %v, dominated by waiting", seed, row.Job, e.Config, e.Value, row.Unallocated)
				if assign[i] >= 0 {
					continue
				}
				waited++
				opt := -1
				for o, idx := range optIdx[i] {
					if idx == k {
						opt = o
					}
				}
				try := append([]int(nil), assign...)
				try[i] = opt
				assert.Error(t, prob.Check(try), "seed %d: job %s waits although %v fits what is free", seed, row.Job, e.Config)
			}
		}
	}
	t.Logf("%d configurations checked, %d of jobs that waited", checked, waited)
	assert.Positive(t, waited, "the property was exercised")
}

// TestLambdaNoEveryJobGuarantee: what the doc says |λ| > 1 does not
// guarantee: 4 GPUs, three linearly scaling jobs, p = −0.5, λ = 1.1 — one
// waits (2 + 2 + 0 beats 2 + 1 + 1); with |λ| above the number of jobs every
// job gets a GPU.
func TestLambdaNoEveryJobGuarantee(t *testing.T) {
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: []Node{{ID: "a0", Type: "A", GPUs: 4}}}
	for _, id := range []string{"a", "b", "c"} {
		snap.Jobs = append(snap.Jobs, Job{ID: id, Submitted: t0, Models: linear})
	}
	count := func(lambda float64) (running int) {
		s, err := New(&Options{Lambda: lambda, NoScaleUpCap: true})
		require.NoError(t, err)
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		require.Equal(t, StatusOptimal, p.Status)
		for _, d := range p.Decisions {
			if d.Allocation.Running() {
				running++
			}
		}
		return running
	}
	assert.Equal(t, 2, count(1.1), "one job waits although each could have a GPU")
	assert.Equal(t, 3, count(3.01), "|λ| above the number of jobs")
}

// TestLambdaAboveJobs: with p < 0 and |λ| above the number of jobs, every
// queued job of a random single-type round gets a GPU whenever there are
// enough GPUs for all (each job's smallest configuration is one GPU).
func TestLambdaAboveJobs(t *testing.T) {
	for seed := 0; seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		gpus := 1 + rng.IntN(8)
		n := 1 + rng.IntN(gpus)
		snap := Snapshot{Now: t0.Add(time.Hour), Nodes: []Node{{ID: "a0", Type: "A", GPUs: gpus}}}
		for i := 0; i < n; i++ {
			tab := siatest.Table{"A": {}}
			g := 0.5 + rng.Float64()
			for r := 1; r <= 8; r *= 2 {
				tab["A"][r] = g
				g *= 1 + rng.Float64()
			}
			snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("j%d", i), Submitted: t0, Models: tab})
		}
		s, err := New(&Options{P: -(0.1 + rng.Float64()), Lambda: float64(n) + 0.01, NoScaleUpCap: true})
		require.NoError(t, err)
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		for _, d := range p.Decisions {
			assert.True(t, d.Allocation.Running(), "seed %d: %d jobs, %d GPUs: job %s waits", seed, n, gpus, d.Job)
		}
	}
}
