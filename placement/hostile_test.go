package placement_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/placement"
)

func hostileNodes() []placement.Node {
	return []placement.Node{{ID: "a0", Type: "a", GPUs: 8}, {ID: "a1", Type: "a", GPUs: 6}, {ID: "b0", Type: "b", GPUs: 4}}
}

// TestHostilePlaceRejected: bad nodes and requests are errors naming the
// node, job or field.
func TestHostilePlaceRejected(t *testing.T) {
	cases := []struct {
		name  string
		nodes func([]placement.Node) []placement.Node
		reqs  []placement.Request
		want  string
	}{
		{"node 0 GPUs", func(n []placement.Node) []placement.Node { n[0].GPUs = 0; return n }, nil, "a0"},
		{"node negative GPUs", func(n []placement.Node) []placement.Node { n[1].GPUs = -6; return n }, nil, "a1"},
		{"node above MaxNodeGPUs", func(n []placement.Node) []placement.Node { n[2].GPUs = placement.MaxNodeGPUs + 1; return n }, nil, "b0"},
		{"node GPUs MaxInt", func(n []placement.Node) []placement.Node { n[2].GPUs = math.MaxInt; return n }, nil, "b0"},
		{"duplicate node", func(n []placement.Node) []placement.Node { n[2].ID = "a0"; return n }, nil, "a0"},
		{"empty node ID", func(n []placement.Node) []placement.Node { n[2].ID = ""; return n }, nil, "ID"},
		{"empty node type", func(n []placement.Node) []placement.Node { n[2].Type = ""; return n }, nil, "b0"},
		{"request negative GPUs", nil, []placement.Request{{Job: "j", Type: "a", GPUs: -1}}, "j"},
		{"request MinInt GPUs", nil, []placement.Request{{Job: "j", Type: "a", GPUs: math.MinInt}}, "j"},
		{"duplicate job", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 1}, {Job: "j", Type: "b", GPUs: 1}}, "j"},
		{"empty job", nil, []placement.Request{{Job: "", Type: "a", GPUs: 1}}, "Job"},
		{"unknown type", nil, []placement.Request{{Job: "j", Type: "c", GPUs: 1}}, "j"},
		{"negative NodeGPUs", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 1, NodeGPUs: -8}}, "j"},
		{"negative Nodes", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 1, Nodes: -1}}, "j"},
		{"Nodes above GPUs", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 2, Nodes: 3}}, "j"},
		{"current on unknown node", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 1, Current: []placement.GPU{{Node: "zz", Index: 0}}}}, "zz"},
		{"current index out of range", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 1, Current: []placement.GPU{{Node: "a1", Index: 6}}}}, "a1"},
		{"current index negative", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 1, Current: []placement.GPU{{Node: "a1", Index: -1}}}}, "a1"},
		{"current GPU twice", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 2, Current: []placement.GPU{{Node: "a1", Index: 1}, {Node: "a1", Index: 1}}}}, "a1"},
		{"request MaxInt GPUs", nil, []placement.Request{{Job: "j", Type: "a", GPUs: math.MaxInt}, {Job: "k", Type: "a", GPUs: 2}}, "j"},
		{"request larger than type", nil, []placement.Request{{Job: "j", Type: "b", GPUs: 5}}, "j"},
		{"NodeGPUs no node has", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 2, NodeGPUs: 7}}, "NodeGPUs"},
		{"NodeGPUs huge", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 2, NodeGPUs: math.MaxInt}}, "NodeGPUs"},
		{"Nodes MaxInt with GPUs MaxInt", nil, []placement.Request{{Job: "j", Type: "a", GPUs: math.MaxInt, Nodes: math.MaxInt}}, "j"},
		{"requests over the type's total", nil, []placement.Request{{Job: "j", Type: "a", GPUs: 14, Nodes: 2}, {Job: "k", Type: "a", GPUs: 1}}, "total"},
		{"current GPU shared", nil, []placement.Request{
			{Job: "j", Type: "a", GPUs: 1, Current: []placement.GPU{{Node: "a1", Index: 1}}},
			{Job: "k", Type: "a", GPUs: 1, Current: []placement.GPU{{Node: "a1", Index: 1}}},
		}, "a1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := hostileNodes()
			if c.nodes != nil {
				nodes = c.nodes(nodes)
			}
			reqs := c.reqs
			if reqs == nil {
				reqs = []placement.Request{{Job: "j", Type: "a", GPUs: 2}}
			}
			_, err := placement.Place(nodes, reqs)
			require.Error(t, err)
			require.ErrorIs(t, err, placement.ErrInvalidInput)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestHostilePlaceAccepted: unusual valid requests give a result that
// never double-books a GPU, gives each placed job exactly its GPUs of its
// type, and lists every other request with GPUs > 0 as unplaced.
func TestHostilePlaceAccepted(t *testing.T) {
	cases := []struct {
		name string
		reqs []placement.Request
	}{
		{"whole type over mixed nodes", []placement.Request{{Job: "j", Type: "a", GPUs: 14}}},
		{"pinned current on other type", []placement.Request{{Job: "j", Type: "a", GPUs: 1, Pinned: true, Current: []placement.GPU{{Node: "b0", Index: 0}}}}},
		{"zero request with current", []placement.Request{{Job: "j", GPUs: 0, Current: []placement.GPU{{Node: "b0", Index: 3}}}, {Job: "k", Type: "b", GPUs: 4}}},
		{"IDs differing in case", []placement.Request{{Job: "j", Type: "a", GPUs: 8}, {Job: "J", Type: "a", GPUs: 6}, {Job: "j ", Type: "b", GPUs: 4}}},
		{"pinned jobs fragmenting", []placement.Request{
			{Job: "p1", Type: "a", GPUs: 1, Pinned: true, Current: []placement.GPU{{Node: "a0", Index: 7}}},
			{Job: "p2", Type: "a", GPUs: 1, Pinned: true, Current: []placement.GPU{{Node: "a1", Index: 0}}},
			{Job: "big", Type: "a", GPUs: 8},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := hostileNodes()
			res, err := placement.Place(nodes, c.reqs)
			require.NoError(t, err)
			byID := map[string]placement.Node{}
			for _, n := range nodes {
				byID[n.ID] = n
			}
			owner := map[placement.GPU]string{}
			unplaced := map[string]bool{}
			for _, j := range res.Unplaced {
				unplaced[j] = true
			}
			for _, r := range c.reqs {
				gs, ok := res.Placements[r.Job]
				if r.GPUs == 0 {
					assert.Empty(t, gs, r.Job)
					continue
				}
				if !ok {
					assert.True(t, unplaced[r.Job], "job %q neither placed nor unplaced", r.Job)
					continue
				}
				require.Len(t, gs, r.GPUs, r.Job)
				nodesUsed := map[string]bool{}
				for _, g := range gs {
					n, ok := byID[g.Node]
					require.True(t, ok)
					assert.Equal(t, r.Type, n.Type, r.Job)
					assert.True(t, g.Index >= 0 && g.Index < n.GPUs)
					prev, dup := owner[g]
					require.False(t, dup, "GPU %v to %s and %s", g, prev, r.Job)
					owner[g] = r.Job
					nodesUsed[g.Node] = true
				}
				if r.Nodes > 0 {
					assert.Equal(t, r.Nodes, len(nodesUsed), r.Job)
				}
			}
			again, err := placement.Place(hostileNodes(), c.reqs)
			require.NoError(t, err)
			assert.Equal(t, res, again, "not deterministic")
		})
	}
	// Shape never allocates beyond its bound.
	assert.LessOrEqual(t, len(placement.Shape(math.MaxInt, 1)), placement.MaxShapeParts)
	assert.Empty(t, placement.Shape(-5, 8))
	assert.Empty(t, placement.Shape(5, 0))
	assert.Empty(t, placement.Shape(5, -8))
}

// TestHostileMixedPoolKeptJobs: on a type with nodes of two sizes, a
// request for any node of the type (NodeGPUs 0) that keeps its current
// GPUs must not have them given to the requests of one size, which are
// placed first: a pinned one keeps them, an unpinned one keeps them or is
// moved, and no GPU is given twice.
func TestHostileMixedPoolKeptJobs(t *testing.T) {
	nodes := []placement.Node{{ID: "s0", Type: "a", GPUs: 6}, {ID: "e0", Type: "a", GPUs: 8}}
	cur := []placement.GPU{{Node: "s0", Index: 0}, {Node: "s0", Index: 1}, {Node: "s0", Index: 2}, {Node: "e0", Index: 0}, {Node: "e0", Index: 1}, {Node: "e0", Index: 2}}
	for _, pinned := range []bool{true, false} {
		reqs := []placement.Request{
			{Job: "held", Type: "a", GPUs: 6, Current: cur, Pinned: pinned, Nodes: 2},
			{Job: "r5", Type: "a", GPUs: 5, NodeGPUs: 8, Nodes: 1},
			{Job: "r3", Type: "a", GPUs: 3, NodeGPUs: 6, Nodes: 1},
		}
		res, err := placement.Place(nodes, reqs)
		require.NoError(t, err)
		owner := map[placement.GPU]string{}
		for job, gs := range res.Placements {
			for _, g := range gs {
				prev, dup := owner[g]
				require.False(t, dup, "pinned %v: GPU %v given to %s and %s", pinned, g, prev, job)
				owner[g] = job
			}
		}
		if pinned {
			assert.ElementsMatch(t, cur, res.Placements["held"], "the pinned job keeps its GPUs")
		}
	}
}
