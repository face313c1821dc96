package placement

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Catalogue of bad inputs to Place: each gives an error wrapping
// ErrInvalidInput (an *InputError whose Job, Node, Type and Field name the
// offending item) and never a panic or a partial result.

func TestCataloguePlace(t *testing.T) {
	nodes := []Node{{ID: "n0", Type: "a", GPUs: 4}, {ID: "n1", Type: "a", GPUs: 4}, {ID: "m0", Type: "b", GPUs: 6}}
	req := func(job, typ string, gpus int, cur ...GPU) Request {
		return Request{Job: job, Type: typ, GPUs: gpus, Current: cur}
	}
	okReq := req("ok", "a", 2, GPU{"n0", 0}, GPU{"n0", 1})
	cases := []struct {
		name  string
		nodes []Node
		reqs  []Request
		want  InputError // fields that must match (Reason is checked by substring)
	}{
		// nodes
		{"empty node ID", []Node{nodes[0], {ID: "", Type: "a", GPUs: 4}}, nil, InputError{Type: "a", Field: "ID", Reason: "node 1 has an empty ID"}},
		{"duplicate node ID", []Node{nodes[0], nodes[1], {ID: "n0", Type: "b", GPUs: 2}}, nil, InputError{Node: "n0", Field: "ID", Reason: "duplicate"}},
		{"empty node type", []Node{{ID: "x", GPUs: 4}}, nil, InputError{Node: "x", Field: "Type", Reason: "empty GPU type"}},
		{"zero GPUs", []Node{{ID: "x", Type: "a", GPUs: 0}}, nil, InputError{Node: "x", Type: "a", Field: "GPUs", Reason: "got 0"}},
		{"negative GPUs", []Node{{ID: "x", Type: "a", GPUs: -8}}, nil, InputError{Node: "x", Type: "a", Field: "GPUs", Reason: "got -8"}},
		{"MinInt GPUs", []Node{{ID: "x", Type: "a", GPUs: math.MinInt}}, nil, InputError{Node: "x", Type: "a", Field: "GPUs"}},
		{"too many GPUs", []Node{{ID: "x", Type: "a", GPUs: MaxNodeGPUs + 1}}, nil, InputError{Node: "x", Type: "a", Field: "GPUs", Reason: "4097"}},
		{"MaxInt GPUs", []Node{{ID: "x", Type: "a", GPUs: math.MaxInt}}, nil, InputError{Node: "x", Type: "a", Field: "GPUs"}},
		// requests
		{"empty job ID", nodes, []Request{okReq, req("", "a", 1)}, InputError{Type: "a", Field: "Job", Reason: "request 1 has an empty job ID"}},
		{"duplicate job", nodes, []Request{okReq, req("j", "a", 1), req("j", "b", 1)}, InputError{Job: "j", Field: "Job", Reason: "duplicate"}},
		{"negative GPUs request", nodes, []Request{okReq, req("j", "a", -1)}, InputError{Job: "j", Type: "a", Field: "GPUs", Reason: "got -1"}},
		{"MinInt GPUs request", nodes, []Request{req("j", "a", math.MinInt)}, InputError{Job: "j", Type: "a", Field: "GPUs"}},
		{"unknown type", nodes, []Request{req("j", "v100", 1)}, InputError{Job: "j", Type: "v100", Field: "Type", Reason: "no node has this GPU type"}},
		{"empty type", nodes, []Request{req("j", "", 1)}, InputError{Job: "j", Field: "Type", Reason: "no node has this GPU type"}},
		{"more GPUs than the type", nodes, []Request{req("j", "b", 7)}, InputError{Job: "j", Type: "b", Field: "GPUs", Reason: "requests 7 GPUs, the type has 6"}},
		{"MaxInt GPUs request", nodes, []Request{req("j", "a", math.MaxInt)}, InputError{Job: "j", Type: "a", Field: "GPUs"}},
		{"total above capacity", nodes, []Request{req("j", "a", 4), req("k", "a", 4), req("l", "a", 1)}, InputError{Type: "a", Field: "GPUs", Reason: "requests total 9 GPUs, the type has 8"}},
		{"current on unknown node", nodes, []Request{req("j", "a", 1, GPU{"zz", 0})}, InputError{Job: "j", Node: "zz", Field: "Current", Reason: "unknown node"}},
		{"current on empty node", nodes, []Request{req("j", "a", 1, GPU{"", 0})}, InputError{Job: "j", Field: "Current", Reason: "unknown node"}},
		{"current index negative", nodes, []Request{req("j", "a", 1, GPU{"n1", -1})}, InputError{Job: "j", Node: "n1", Field: "Current", Reason: "GPU index -1 out of range [0,4)"}},
		{"current index too large", nodes, []Request{req("j", "a", 1, GPU{"n1", 4})}, InputError{Job: "j", Node: "n1", Field: "Current", Reason: "GPU index 4"}},
		{"current index MaxInt", nodes, []Request{req("j", "a", 1, GPU{"n1", math.MaxInt})}, InputError{Job: "j", Node: "n1", Field: "Current"}},
		{"current GPU twice", nodes, []Request{req("j", "a", 2, GPU{"n1", 3}, GPU{"n1", 3})}, InputError{Job: "j", Node: "n1", Field: "Current", Reason: "GPU 3 claimed twice by this job"}},
		{"current GPU of another job", nodes, []Request{okReq, req("j", "a", 1, GPU{"n0", 1})}, InputError{Job: "ok", Node: "n0", Field: "Current", Reason: `claimed also by job "j"`}},
		{"current GPU of another job, job leaving", nodes, []Request{req("j", "a", 0, GPU{"m0", 5}), req("k", "b", 1, GPU{"m0", 5})}, InputError{Job: "k", Node: "m0", Field: "Current", Reason: `also by job "j"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Place(c.nodes, c.reqs)
			assert.Equal(t, Result{}, res)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.True(t, errors.As(err, &ie))
			assert.Equal(t, c.want.Job, ie.Job, "Job")
			assert.Equal(t, c.want.Node, ie.Node, "Node")
			assert.Equal(t, c.want.Type, ie.Type, "Type")
			assert.Equal(t, c.want.Field, ie.Field, "Field")
			assert.Contains(t, ie.Reason, c.want.Reason)
			for _, name := range []string{c.want.Job, c.want.Node, c.want.Type, c.want.Field} {
				assert.Contains(t, err.Error(), name)
			}
			// Same error whatever the order of the requests.
			rev := append([]Request(nil), c.reqs...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			_, err2 := Place(c.nodes, rev)
			if c.name != "empty job ID" { // the message gives the request's position
				assert.Equal(t, err.Error(), err2.Error())
			}
		})
	}
}

// TestCataloguePlaceValidEdges: inputs that look odd but are valid succeed.
func TestCataloguePlaceValidEdges(t *testing.T) {
	nodes := []Node{{ID: "n0", Type: "a", GPUs: 4}, {ID: "n1", Type: "a", GPUs: 4}}
	// No nodes and no requests; no requests; only zero-GPU requests (their
	// type is ignored, even if unknown); a zero-GPU request releasing GPUs.
	for _, c := range []struct {
		nodes []Node
		reqs  []Request
	}{
		{nil, nil},
		{nodes, nil},
		{nil, []Request{{Job: "j", Type: "zz", GPUs: 0}}},
		{nodes, []Request{{Job: "j", Type: "", GPUs: 0, Current: []GPU{{"n0", 0}, {"n0", 1}}}}},
		// A job as large as the whole type.
		{nodes, []Request{{Job: "all", Type: "a", GPUs: 8}}},
		// A job that runs on another type's GPUs and moves.
		{append(nodes, Node{ID: "m", Type: "b", GPUs: 2}), []Request{{Job: "j", Type: "a", GPUs: 2, Current: []GPU{{"m", 0}, {"m", 1}}}}},
	} {
		res, err := Place(c.nodes, c.reqs)
		require.NoError(t, err)
		for _, r := range c.reqs {
			assert.Len(t, res.Placements[r.Job], r.GPUs)
		}
		assert.Empty(t, res.Unplaced)
	}
}

// TestCatalogueShape: Shape with caller values that are not GPU counts
// answers nil instead of allocating without bound (Shape(MaxInt, 1) used to
// try to build 2^63 parts).
func TestCatalogueShape(t *testing.T) {
	for _, c := range [][2]int{{0, 8}, {-1, 8}, {8, 0}, {8, -8}, {math.MinInt, 4}, {4, math.MinInt},
		{math.MaxInt, 1}, {math.MaxInt, 6}, {math.MaxInt - 1, 8}, {MaxShapeParts + 1, 1}, {2*MaxShapeParts + 2, 2}, {6*MaxShapeParts + 4, 6}} {
		assert.Nil(t, Shape(c[0], c[1]), "Shape(%d, %d)", c[0], c[1])
	}
	// At the bound, and huge nodes.
	assert.Len(t, Shape(MaxShapeParts, 1), MaxShapeParts)
	assert.Equal(t, []int{math.MaxInt}, Shape(math.MaxInt, math.MaxInt))
	assert.Equal(t, []int{1 << 61, 1 << 61}, Shape(1<<62, 1<<61))
}
