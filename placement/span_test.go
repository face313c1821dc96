package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/configset"
)

// spanCluster is type x with one 8-GPU node e0 and two 6-GPU nodes s0, s1.
func spanCluster() []Node {
	return []Node{{ID: "e0", Type: "x", GPUs: 8}, {ID: "s0", Type: "x", GPUs: 6}, {ID: "s1", Type: "x", GPUs: 6}}
}

func TestPlaceParts(t *testing.T) {
	nodes := spanCluster()
	req := Request{Job: "j", Type: "x", GPUs: 14, Parts: []Part{{NodeGPUs: 8, Nodes: 1, GPUs: 8}, {NodeGPUs: 6, Nodes: 1, GPUs: 6}}}
	res, err := Place(nodes, []Request{req, {Job: "k", Type: "x", GPUs: 6, NodeGPUs: 6}})
	require.NoError(t, err)
	require.Empty(t, res.Unplaced)
	got := res.Placements["j"]
	require.Len(t, got, 14)
	per := map[string]int{}
	for _, g := range got {
		per[g.Node]++
	}
	assert.Equal(t, 8, per["e0"])
	assert.Len(t, per, 2)
	assert.Len(t, res.Placements["k"], 6)
	for _, g := range res.Placements["k"] {
		assert.Zero(t, per[g.Node], "k shares a node with j")
	}

	// a job that keeps its parts keeps its GPUs, in node order
	req.Current = cat(gpus("s1", 0, 1, 2, 3, 4, 5), gpus("e0", 0, 1, 2, 3, 4, 5, 6, 7))
	res, err = Place(nodes, []Request{req})
	require.NoError(t, err)
	assert.Equal(t, cat(gpus("e0", 0, 1, 2, 3, 4, 5, 6, 7), gpus("s1", 0, 1, 2, 3, 4, 5)), res.Placements["j"])
	assert.Empty(t, res.Migrated)
	assert.Empty(t, res.Evicted)

	// same count, other GPUs: migrated (a move)
	req.Current = cat(gpus("e0", 0, 1, 2, 3, 4, 5, 6, 7), gpus("s0", 0, 1, 2, 3, 4, 5))
	res, err = Place(nodes, []Request{req, {Job: "p", Type: "x", GPUs: 1, NodeGPUs: 6, Pinned: true, Current: gpus("s0", 0)}})
	require.Error(t, err, "s0/0 claimed twice")
	assert.ErrorContains(t, err, `"j"`)

	// a pinned job fragments both 6-GPU nodes: the 6-GPU part cannot be
	// placed, and the job gets none of its GPUs
	req.Current = nil
	res, err = Place(nodes, []Request{req,
		{Job: "p0", Type: "x", GPUs: 1, NodeGPUs: 6, Pinned: true, Current: gpus("s0", 0)},
		{Job: "p1", Type: "x", GPUs: 1, NodeGPUs: 6, Pinned: true, Current: gpus("s1", 0)}})
	require.NoError(t, err)
	assert.Equal(t, []string{"j"}, res.Unplaced)
	assert.NotContains(t, res.Placements, "j")
	for id := range res.Placements {
		assert.NotContains(t, id, "\x00", "a part's request leaked")
	}
}

func TestPlacePartsErrors(t *testing.T) {
	nodes := spanCluster()
	parts := func(p ...Part) Request { return Request{Job: "j", Type: "x", GPUs: 14, Parts: p} }
	for _, tc := range []struct {
		name, field string
		req         Request
	}{
		{"sum", "Parts", parts(Part{8, 1, 8}, Part{6, 1, 5})},
		{"twice", "Parts[1]", Request{Job: "j", Type: "x", GPUs: 12, Parts: []Part{{6, 1, 6}, {6, 1, 6}}}},
		{"zero", "Parts[0]", parts(Part{8, 0, 8}, Part{6, 1, 6})},
		{"nodegpus", "Parts", func() Request { r := parts(Part{8, 1, 8}, Part{6, 1, 6}); r.NodeGPUs = 8; return r }()},
		{"nodes", "Parts", func() Request { r := parts(Part{8, 1, 8}, Part{6, 1, 6}); r.Nodes = 3; return r }()},
		{"unknown size", "NodeGPUs", parts(Part{8, 1, 8}, Part{4, 1, 6})},
		{"beyond the pool", "GPUs", Request{Job: "j", Type: "x", GPUs: 21, Parts: []Part{{8, 1, 8}, {6, 3, 13}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Place(nodes, []Request{tc.req})
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "j", ie.Job, "the error names the job, not a part")
			assert.Equal(t, tc.field, ie.Field)
		})
	}
	r := parts(Part{8, 1, 8}, Part{6, 1, 6})
	_, err := Place(nodes, []Request{r, {Job: "j\x000", Type: "x", GPUs: 1}})
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestPlacePartsProperty: on random types mixing node sizes, any mix of
// one-pool configurations and spanning ones (configset.Set.Span) whose
// charges fit each pool is placed, every job in its shape (a spanning job's
// parts on nodes of their sizes).
func TestPlacePartsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	placed := 0
	for iter := 0; iter < 300; iter++ {
		nodes, set, err := spanFleet(rng)
		require.NoError(t, err)
		free := map[string]int{}
		for _, p := range set.Pools() {
			free[p.Name] = p.Capacity()
		}
		all := set.Configs()
		var reqs []Request
		var want []configset.Config
		for k := 0; k < 12; k++ {
			var c configset.Config
			if rng.IntN(3) == 0 {
				var ok bool
				if c, ok = set.Span("x", set.LargestPool("x")+1+rng.IntN(set.Capacity("x"))); !ok {
					continue
				}
			} else {
				c = all[rng.IntN(len(all))]
			}
			use := map[string]int{}
			if c.Spanning() {
				for _, p := range c.Parts() {
					use[configset.PoolName("x", p.NodeGPUs)] += set.PartCharge("x", p)
				}
			} else {
				use[c.Pool()] += set.Charge(c)
			}
			fits := true
			for pool, g := range use {
				fits = fits && g <= free[pool]
			}
			if !fits {
				continue
			}
			for pool, g := range use {
				free[pool] -= g
			}
			r := Request{Job: fmt.Sprintf("j%02d", k), Type: "x", GPUs: c.GPUs, NodeGPUs: c.NodeGPUs, Nodes: c.Nodes}
			for _, p := range c.Parts() {
				r.Parts = append(r.Parts, Part{NodeGPUs: p.NodeGPUs, Nodes: p.Nodes, GPUs: p.GPUs})
			}
			if c.Spanning() {
				r.Nodes = 0
			}
			reqs = append(reqs, r)
			want = append(want, c)
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err, "iter %d", iter)
		require.Empty(t, res.Unplaced, "iter %d: %v", iter, want)
		size := map[string]int{}
		for _, n := range nodes {
			size[n.ID] = n.GPUs
		}
		for k, r := range reqs {
			gs := res.Placements[r.Job]
			require.Len(t, gs, r.GPUs)
			perSize, nodesOf := map[int]int{}, map[int]map[string]bool{}
			for _, g := range gs {
				s := size[g.Node]
				perSize[s]++
				if nodesOf[s] == nil {
					nodesOf[s] = map[string]bool{}
				}
				nodesOf[s][g.Node] = true
			}
			c := want[k]
			if c.Spanning() {
				for _, p := range c.Parts() {
					assert.Equal(t, p.GPUs, perSize[p.NodeGPUs], "iter %d %v", iter, c)
					assert.Len(t, nodesOf[p.NodeGPUs], p.Nodes, "iter %d %v", iter, c)
				}
				assert.Len(t, perSize, len(c.Parts()))
			} else {
				require.Len(t, perSize, 1)
				assert.Len(t, nodesOf[c.NodeGPUs], c.Nodes, "iter %d %v", iter, c)
			}
			placed++
		}
	}
	t.Logf("%d jobs placed", placed)
}
