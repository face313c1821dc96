package siapolicy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

func TestPlaceRoundRobin(t *testing.T) {
	for _, tc := range []struct {
		name          string
		reqs          []request
		nodes, per    int
		want          map[string][]int
		wantErrSubstr string
	}{
		{"whole nodes first, then partial, descending",
			[]request{{"a", 4}, {"b", 2}, {"c", 2}, {"d", 4}}, 3, 4,
			map[string][]int{"a": {0, 0, 0, 0}, "d": {1, 1, 1, 1}, "b": {2, 2}, "c": {2, 2}}, ""},
		{"a partial allocation can split",
			[]request{{"a", 6}, {"b", 6}, {"c", 4}}, 2, 8,
			map[string][]int{"a": {0, 0, 0, 0, 0, 0}, "b": {1, 1, 1, 1, 1, 1}, "c": {0, 0, 1, 1}}, ""},
		{"multi-node job takes whole nodes from the cursor",
			[]request{{"a", 1}, {"b", 8}}, 3, 4,
			map[string][]int{"b": {0, 0, 0, 0, 1, 1, 1, 1}, "a": {2}}, ""},
		{"over capacity", []request{{"a", 5}}, 1, 4, nil, "capacity"},
		{"zero GPUs", []request{{"a", 0}}, 1, 4, nil, `job "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := placeRoundRobin(tc.reqs, tc.nodes, tc.per)
			if tc.wantErrSubstr != "" {
				require.ErrorContains(t, err, tc.wantErrSubstr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Any request set within capacity is placed completely and never
// oversubscribes a node.
func TestPlaceRoundRobinProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 2000; it++ {
		nodes, per := 1+rng.IntN(6), []int{4, 8}[rng.IntN(2)]
		left := nodes * per
		var reqs []request
		for left > 0 && rng.IntN(8) > 0 {
			g := 1 + rng.IntN(min(left, 2*per))
			reqs = append(reqs, request{fmt.Sprint("j", len(reqs)), g})
			left -= g
		}
		got, err := placeRoundRobin(reqs, nodes, per)
		require.NoError(t, err)
		load := make([]int, nodes)
		for _, r := range reqs {
			require.Len(t, got[r.job], r.gpus, r.job)
			for _, k := range got[r.job] {
				load[k]++
			}
		}
		for k, l := range load {
			require.LessOrEqual(t, l, per, "node %d", k)
		}
	}
}

// The published simulator's setup (static-ratio projection, no seeds, cap,
// artifact knobs and placer) runs to completion, deterministically, and
// differs from the library's bootstrap.
func TestSiaArtifactShortRun(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(2, 1, 20)
	require.NoError(t, err)
	run := func(opt Options) sim.Summary {
		p, err := New(c, m, opt)
		require.NoError(t, err)
		res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m}, wl, p)
		require.NoError(t, err)
		return sim.Summarize([]*sim.Result{res})
	}
	art := Options{CapAtRequest: true, NoSeed: true, Projection: StaticRatioProjection, ArtifactPlacement: true,
		Sia: &sia.Options{Artifact: sia.PublishedArtifact()}, Name: "sia-artifact"}
	a, b := run(art), run(art)
	assert.Equal(t, 0, a.Unfinished)
	assert.Equal(t, a.JCTs, b.JCTs, "deterministic")
	lib := run(Options{Sia: &sia.Options{Artifact: sia.PublishedArtifact()}})
	assert.NotEqual(t, lib.JCTs, a.JCTs)
	_, err = New(c, m, Options{Projection: Projection(7)})
	assert.ErrorContains(t, err, "projection")
}

// With a static-ratio projection, the job's models are a
// bootstrap.RatioProjection over a tracker that neither seeds nor projects.
func TestStaticRatioModels(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	wl, err := sim.Generate(2, 1, 20)
	require.NoError(t, err)
	p, err := New(c, m, Options{NoSeed: true, Projection: StaticRatioProjection})
	require.NoError(t, err)
	app, ok := m.App(wl.Jobs[0].App)
	require.True(t, ok)
	j := &sim.Job{Spec: wl.Jobs[0], App: app}
	st, err := p.newJob(j)
	require.NoError(t, err)
	rp, ok := st.models.(*bootstrap.RatioProjection)
	require.True(t, ok)
	assert.Equal(t, bootstrap.NoProfiling, st.tracker.Mode())
	assert.Equal(t, c.Types(), rp.Order)
	for _, ty := range c.Types() {
		_, src := rp.Model(ty)
		assert.Equal(t, bootstrap.None, src, "no model before the first run on %s", ty)
	}
	seeded, err := New(c, m, Options{Projection: StaticRatioProjection})
	require.NoError(t, err)
	st, err = seeded.newJob(j)
	require.NoError(t, err)
	assert.Equal(t, bootstrap.Oracle, st.tracker.Mode(), "seeds accepted, no tracker projection")
	_, src := st.models.Model(c.Types()[0])
	assert.Equal(t, bootstrap.Seeded, src)
}
