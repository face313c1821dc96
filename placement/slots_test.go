package placement

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/configset"
)

// toSlots returns the current GPUs of reqs as slots (node positions; an
// unknown node gets position len(nodes)) and the requests without them.
func toSlots(nodes []Node, reqs []Request) ([]Request, [][]Slot) {
	pos := map[string]int{}
	for i, n := range nodes {
		pos[n.ID] = i
	}
	out := make([]Request, len(reqs))
	cur := make([][]Slot, len(reqs))
	for k, r := range reqs {
		for _, g := range r.Current {
			n, ok := pos[g.Node]
			if !ok {
				n = len(nodes)
			}
			cur[k] = append(cur[k], Slot{Node: int32(n), Index: int32(g.Index)})
		}
		r.Current = nil
		out[k] = r
	}
	return out, cur
}

// slotsTwin places reqs with PlaceContext, with PlaceSlots (their current
// GPUs as slots) and with pl's PlaceSlots, and requires the same outcome:
// all fail, or the slot results named by IDs are PlaceContext's result. It
// returns that result.
func slotsTwin(t *testing.T, pl *Placer, nodes []Node, reqs []Request) (Result, error) {
	t.Helper()
	want, werr := PlaceContext(context.Background(), nodes, reqs)
	sreqs, cur := toSlots(nodes, reqs)
	got, gerr := PlaceSlots(context.Background(), nodes, sreqs, cur)
	kept, kerr := pl.PlaceSlots(context.Background(), nodes, sreqs, cur)
	if werr != nil {
		require.Error(t, gerr, "PlaceContext: %v", werr)
		require.Equal(t, gerr, kerr)
		return want, werr
	}
	require.NoError(t, gerr)
	require.NoError(t, kerr)
	require.Equal(t, got, kept, "Placer")
	require.Len(t, got.Placements, len(reqs))
	require.Equal(t, want, namedResult(nodes, reqs, got))
	// every list is capped: appending to one leaves the next intact
	for k, gs := range got.Placements {
		if len(gs) == 0 {
			continue
		}
		require.Equal(t, len(gs), cap(gs), "request %d", k)
		_ = append(gs, Slot{Node: -7})
	}
	require.Equal(t, want, namedResult(nodes, reqs, got))
	return want, nil
}

// TestPlaceSlotsTwin: PlaceSlots gives PlaceContext's placement on random
// rounds (kept, resized, moved, dropped and new jobs; pins; node sizes that
// are no power of two) and on rounds of spanning requests that ran before.
func TestPlaceSlotsTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var pl Placer
	evicted := 0
	for iter := 0; iter < 300; iter++ {
		sc := randomScenario(rng, iter%2 == 0, iter%3 == 0)
		res, err := slotsTwin(t, &pl, sc.nodes, sc.reqs)
		require.NoError(t, err)
		evicted += len(res.Evicted)
	}
	t.Logf("%d evictions", evicted)
	spanning := 0
	for iter := 0; iter < 200; iter++ {
		nodes, reqs := spanRound(rng)
		res, err := slotsTwin(t, &pl, nodes, reqs)
		require.NoError(t, err, "iter %d", iter)
		for _, r := range reqs {
			if len(r.Parts) > 0 && len(r.Current) > 0 && res.Placements[r.Job] != nil {
				spanning++
			}
		}
	}
	assert.Positive(t, spanning, "no spanning job that ran before was placed")
}

// spanFleet returns a type "x" of 2 or 3 node sizes (from 2 to 12 GPUs),
// 1 to 3 nodes of each, and its configuration set.
func spanFleet(rng *rand.Rand) ([]Node, *configset.Set, error) {
	var nodes []Node
	var groups []configset.NodeGroup
	sizes := []int{8, 6, 4, 3, 5, 12, 2}
	rng.Shuffle(len(sizes), func(a, b int) { sizes[a], sizes[b] = sizes[b], sizes[a] })
	for p := 0; p < 2+rng.IntN(2); p++ {
		n := 1 + rng.IntN(3)
		groups = append(groups, configset.NodeGroup{Type: "x", GPUsPerNode: sizes[p], Nodes: n})
		for k := 0; k < n; k++ {
			nodes = append(nodes, Node{ID: fmt.Sprintf("n%d_%d", p, k), Type: "x", GPUs: sizes[p]})
		}
	}
	set, err := configset.New(groups, nil)
	return nodes, set, err
}

// spanRound returns a type of 2 or 3 node sizes and a second round of
// requests (one-pool and spanning configurations) on it: the first round's
// jobs keep, change or drop their configuration, holding their GPUs.
func spanRound(rng *rand.Rand) ([]Node, []Request) {
	nodes, set, err := spanFleet(rng)
	if err != nil {
		panic(err)
	}
	request := func(job string) Request {
		c, ok := set.Span("x", set.LargestPool("x")+1+rng.IntN(set.Capacity("x")))
		if !ok || rng.IntN(2) == 0 {
			all := set.Configs()
			c = all[rng.IntN(len(all))]
		}
		r := Request{Job: job, Type: "x", GPUs: c.GPUs, NodeGPUs: c.NodeGPUs, Nodes: c.Nodes}
		if c.Spanning() {
			r.NodeGPUs, r.Nodes = 0, 0
			for _, p := range c.Parts() {
				r.Parts = append(r.Parts, Part{NodeGPUs: p.NodeGPUs, Nodes: p.Nodes, GPUs: p.GPUs})
			}
		}
		return r
	}
	var first []Request
	for k := 0; k < 8; k++ {
		r := request(fmt.Sprintf("j%02d", k))
		if res, err := Place(nodes, append(first, r)); err == nil && len(res.Unplaced) == 0 {
			first = append(first, r)
		}
	}
	res, err := Place(nodes, first)
	if err != nil {
		panic(err)
	}
	var next []Request
	for k, r := range first {
		r.Current = res.Placements[r.Job]
		switch rng.IntN(4) {
		case 0:
			q := request(r.Job)
			q.Current = r.Current
			if _, err := Place(nodes, append(append(slices.Clone(next), q), first[k+1:]...)); err == nil {
				r = q
			}
		case 1:
			r = Request{Job: r.Job, Current: r.Current}
		}
		next = append(next, r)
	}
	return nodes, next
}

// TestPlaceSlotsErrors: the inputs only PlaceSlots has are checked, and
// bad slots are the errors PlaceContext gives for bad current GPUs.
func TestPlaceSlotsErrors(t *testing.T) {
	nodes := mkNodes("a", 2, 4)
	ctx := context.Background()
	req := Request{Job: "j", Type: "a", GPUs: 2}
	for _, c := range []struct {
		name string
		reqs []Request
		cur  [][]Slot
		want string
	}{
		{"lists", []Request{req}, [][]Slot{nil, nil}, "2 lists of current GPUs for 1 requests"},
		{"lists short", []Request{req, {Job: "k"}}, [][]Slot{nil}, "1 lists of current GPUs for 2 requests"},
		{"named", []Request{{Job: "j", Type: "a", GPUs: 2, Current: gpus("a-0", 0)}}, nil, `job "j" Current: set`},
		{"node below", []Request{req}, [][]Slot{{{Node: -1, Index: 0}}}, "node position -1 out of range [0,2)"},
		{"node past", []Request{req}, [][]Slot{{{Node: 2, Index: 0}}}, "node position 2 out of range [0,2)"},
		{"index", []Request{req}, [][]Slot{{{Node: 1, Index: 4}}}, `node "a-1" Current: GPU index 4 out of range [0,4)`},
		{"index below", []Request{req}, [][]Slot{{{Node: 1, Index: -1}}}, "GPU index -1 out of range"},
		{"twice", []Request{req}, [][]Slot{{{Node: 1, Index: 3}, {Node: 1, Index: 3}}}, `node "a-1" Current: GPU 3 claimed twice by this job`},
		{"other job", []Request{req, {Job: "k", Type: "a", GPUs: 1}}, [][]Slot{{{Node: 0, Index: 1}}, {{Node: 0, Index: 1}}}, `GPU 1 claimed also by job "j"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := PlaceSlots(ctx, nodes, c.reqs, c.cur)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.ErrorContains(t, err, c.want)
			var pl Placer
			_, perr := pl.PlaceSlots(ctx, nodes, c.reqs, c.cur)
			assert.Equal(t, err, perr, "Placer")
		})
	}
	// cur nil: no request holds GPUs
	res, err := PlaceSlots(ctx, nodes, []Request{req}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Slot{{0, 0}, {0, 1}}, res.Placements[0])
}

// TestScratchReuse: a placement on the nodes of the last one (its index
// kept) gives what a fresh one gives, whatever was placed in between and
// whether it failed.
func TestScratchReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for iter := 0; iter < 100; iter++ {
		a := randomScenario(rng, iter%2 == 0, iter%3 == 0)
		b := randomScenario(rng, iter%2 == 1, false)
		fresh, err := newProblem(a.nodes, a.reqs)
		require.NoError(t, err)
		want := fresh.run(true)
		for k, sc := range []scenario{a, a, b, a} {
			got, err := Place(sc.nodes, sc.reqs)
			require.NoError(t, err)
			if k != 2 {
				require.Equal(t, want, got, "iter %d, call %d", iter, k)
			}
			// a bad request between two good ones
			_, err = Place(sc.nodes, append(slices.Clone(sc.reqs), Request{Job: "bad", Type: "none", GPUs: 1}))
			require.Error(t, err)
		}
	}
}
