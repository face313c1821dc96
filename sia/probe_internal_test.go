package sia

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNodesOfAnyOrder: nodesOf counts the distinct nodes of a placement
// node by node (Place's order), interleaved (a host's Current) and beyond
// the 16 nodes it scans without a map, against a map.
func TestNodesOfAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nodes := range []int{0, 1, 2, 16, 17, 40, 300} {
		var gs []GPU
		for n := 0; n < nodes; n++ {
			for k := 0; k < 1+rng.IntN(5); k++ {
				gs = append(gs, GPU{Node: fmt.Sprintf("n%d", n), Index: k})
			}
		}
		assert.Equal(t, nodes, nodesOf(gs), "%d nodes in order", nodes)
		rng.Shuffle(len(gs), func(a, b int) { gs[a], gs[b] = gs[b], gs[a] })
		assert.Equal(t, nodes, nodesOf(gs), "%d nodes shuffled", nodes)
	}
}
