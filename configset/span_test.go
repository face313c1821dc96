package configset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mixed(t *testing.T, groups ...NodeGroup) *Set {
	t.Helper()
	s, err := New(groups, nil)
	require.NoError(t, err)
	return s
}

// TestSpan: counts that no pool holds are shaped over the pools on the
// fewest nodes, charging the fewest GPUs; counts a pool holds, counts
// beyond the type and types of one pool get none.
func TestSpan(t *testing.T) {
	s := mixed(t, NodeGroup{"a100", 8, 2}, NodeGroup{"a100", 6, 2}, NodeGroup{"t4", 4, 3})
	for _, tc := range []struct {
		g     int
		parts []Part
		nodes int
	}{
		{28, []Part{{8, 2, 16}, {6, 2, 12}}, 4},
		{17, []Part{{8, 2, 16}, {6, 1, 1}}, 3}, // 3 nodes; 16 + 1 charges 17, 8+8+6 less 5 elsewhere more
		{20, []Part{{8, 1, 8}, {6, 2, 12}}, 3}, // exact on 3 nodes, rather than 8 + 8 + 4 (charged 22)
		{22, []Part{{8, 2, 16}, {6, 1, 6}}, 3},
		{27, []Part{{8, 2, 16}, {6, 2, 11}}, 4},
	} {
		c, ok := s.Span("a100", tc.g)
		require.True(t, ok, "g=%d", tc.g)
		assert.Equal(t, tc.parts, c.Parts(), "g=%d", tc.g)
		assert.Equal(t, tc.nodes, c.Nodes, "g=%d", tc.g)
		assert.Equal(t, tc.g, c.GPUs)
		assert.True(t, c.Spanning())
		assert.Zero(t, c.NodeGPUs)
		_, in := s.Index(c)
		assert.False(t, in, "spanning configurations are not in Configs")
	}
	for _, g := range []int{0, 1, 16, 29} {
		_, ok := s.Span("a100", g)
		assert.False(t, ok, "g=%d", g)
	}
	_, ok := s.Span("t4", 10)
	assert.False(t, ok, "one pool")
	_, ok = s.Span("v100", 10)
	assert.False(t, ok)

	c, _ := s.Span("a100", 27)
	assert.Equal(t, "(4,27,a100{8x2:16+6x2:11})", c.String())
	assert.Equal(t, 28, s.Charge(c), "11 on two 6-GPU nodes: 6 + 5, the 5 charged 6")
	assert.Equal(t, "a100", c.Pool())
}

func TestSpans(t *testing.T) {
	s := mixed(t, NodeGroup{"a100", 8, 2}, NodeGroup{"a100", 6, 2})
	gpus := func(cs []Config) []int {
		var out []int
		for _, c := range cs {
			out = append(out, c.GPUs)
		}
		return out
	}
	assert.Equal(t, []int{20, 22, 28}, gpus(s.Spans("a100", 20, 0, 1, 0)))
	assert.Equal(t, []int{20}, gpus(s.Spans("a100", 20, 21, 1, 0)))
	assert.Equal(t, []int{20, 22}, gpus(s.Spans("a100", 20, 0, 1, 2)))
	assert.Equal(t, []int{21, 28}, gpus(s.Spans("a100", 19, 0, 7, 0)))
	assert.Empty(t, s.Spans("a100", 16, 0, 1, 0), "a pool holds 16")
	assert.Empty(t, s.Spans("a100", 29, 0, 1, 0))
}

func TestSpanned(t *testing.T) {
	s := mixed(t, NodeGroup{"a100", 8, 1}, NodeGroup{"a100", 6, 2})
	c, ok := s.Spanned("a100", []Part{{6, 1, 6}, {8, 1, 8}})
	require.True(t, ok)
	assert.Equal(t, Config{Type: "a100", Nodes: 2, GPUs: 14, Span: "8x1:8+6x1:6"}, c, "parts in pool order")
	for _, bad := range [][]Part{
		{{8, 1, 8}},                       // one pool
		{{8, 2, 16}, {6, 1, 6}},           // two 8-GPU nodes, the type has one
		{{8, 1, 9}, {6, 1, 6}},            // 9 GPUs on one 8-GPU node
		{{8, 1, 8}, {4, 1, 4}},            // no 4-GPU pool
		{{8, 1, 8}, {6, 1, 6}, {6, 1, 6}}, // one pool twice
		{{8, 0, 0}, {6, 1, 6}},
	} {
		_, ok := s.Spanned("a100", bad)
		assert.False(t, ok, "%v", bad)
	}
	assert.Nil(t, Config{Type: "a100", Span: "8x1"}.Parts(), "malformed")
	assert.Nil(t, Config{Type: "a100", Span: "8x1:8+y"}.Parts(), "malformed")
}

// TestSpanProperty: against a brute force over every choice of nodes, Span
// uses the fewest nodes and, on that many, charges the fewest GPUs; its
// shape fits the type's nodes.
func TestSpanProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	for iter := 0; iter < 300; iter++ {
		sizes := []int{8, 6, 4, 3, 5, 12, 2, 10}
		rng.Shuffle(len(sizes), func(a, b int) { sizes[a], sizes[b] = sizes[b], sizes[a] })
		var groups []NodeGroup
		for p := 0; p < 2+rng.IntN(2); p++ {
			groups = append(groups, NodeGroup{"x", sizes[p], 1 + rng.IntN(3)})
		}
		s := mixed(t, groups...)
		for g := s.LargestPool("x") + 1; g <= s.Capacity("x"); g++ {
			c, ok := s.Span("x", g)
			require.True(t, ok, "iter %d g %d %v", iter, g, groups)
			_, ok = s.Spanned("x", c.Parts())
			require.True(t, ok)
			nodes, charge := bruteSpan(s, groups, g)
			assert.Equal(t, nodes, c.Nodes, "iter %d g %d %v: %v", iter, g, groups, c)
			assert.Equal(t, charge, s.Charge(c), "iter %d g %d %v: %v", iter, g, groups, c)
		}
	}
}

// bruteSpan returns the fewest nodes holding g GPUs and the least charge of
// a shape on that many nodes (whole nodes per pool, the deficit off one).
func bruteSpan(s *Set, groups []NodeGroup, g int) (int, int) {
	bestN, bestC := -1, -1
	w := make([]int, len(groups))
	var rec func(i int)
	rec = func(i int) {
		if i < len(groups) {
			for n := 0; n <= groups[i].Nodes; n++ {
				w[i] = n
				rec(i + 1)
			}
			return
		}
		nodes, sum, used := 0, 0, 0
		for k, n := range w {
			nodes, sum = nodes+n, sum+n*groups[k].GPUsPerNode
			if n > 0 {
				used++
			}
		}
		if sum < g || used < 2 || (bestN >= 0 && nodes > bestN) {
			return
		}
		d := sum - g
		for q, n := range w {
			r := groups[q].GPUsPerNode
			if n == 0 || (d > 0 && r <= d) {
				continue
			}
			c := sum
			if d > 0 {
				c = sum - r + s.PartCharge("x", Part{r, 1, r - d})
			}
			if bestN < 0 || nodes < bestN || c < bestC {
				bestN, bestC = nodes, c
			}
		}
	}
	rec(0)
	return bestN, bestC
}

func TestSpanString(t *testing.T) {
	s := mixed(t, NodeGroup{"x", 8, 1}, NodeGroup{"x", 6, 1})
	c, ok := s.Span("x", 14)
	require.True(t, ok)
	assert.Equal(t, "(2,14,x{8x1:8+6x1:6})", fmt.Sprint(c))
	assert.True(t, slices.Equal([]Part{{8, 1, 8}, {6, 1, 6}}, c.Parts()))
}

// FuzzSpan: Parts never panics and round-trips through the encoding; Span
// on any two-size type gives a shape that fits the type's nodes, holds
// exactly g GPUs and is charged at least g.
func FuzzSpan(f *testing.F) {
	f.Add("8x1:8+6x1:6", 8, 2, 6, 2, 20)
	f.Add("x:+", 5, 1, 3, 4, 9)
	f.Add("12x3:-1", 12, 3, 10, 1, 40)
	f.Fuzz(func(t *testing.T, span string, r1, n1, r2, n2, g int) {
		c := Config{Type: "x", Span: span}
		if parts := c.Parts(); parts != nil {
			assert.Equal(t, parts, Config{Type: "x", Span: encodeSpan(parts)}.Parts())
		}
		if r1 < 1 || r1 > 64 || r2 < 1 || r2 > 64 || r1 == r2 || n1 < 1 || n1 > 64 || n2 < 1 || n2 > 64 {
			return
		}
		s, err := New([]NodeGroup{{"x", r1, n1}, {"x", r2, n2}}, nil)
		require.NoError(t, err)
		sp, ok := s.Span("x", g)
		if !ok {
			assert.True(t, g <= s.LargestPool("x") || g > s.Capacity("x"), "g=%d", g)
			return
		}
		_, fits := s.Spanned("x", sp.Parts())
		assert.True(t, fits, "%v", sp)
		assert.Equal(t, g, sp.GPUs)
		assert.GreaterOrEqual(t, s.Charge(sp), g)
	})
}
