package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIDSetBruteForce: the hash set of job IDs that finds duplicate
// requests agrees with a map on random IDs with many repeats (so that
// probes run past occupied slots).
func TestIDSetBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 200; iter++ {
		n := 1 + rng.IntN(300)
		reqs := make([]Request, n)
		for k := range reqs {
			reqs[k].Job = fmt.Sprintf("j%d", rng.IntN(1+n/2))
		}
		set := newIDSet(reqs)
		seen := map[string]bool{}
		for k := range reqs {
			require.Equal(t, !seen[reqs[k].Job], set.add(k), "request %d (%q)", k, reqs[k].Job)
			seen[reqs[k].Job] = true
		}
	}
}

// TestNodeLookupBruteForce: the GPU → node array and the cached node of
// the last current GPU agree with a search over the nodes, in any order
// of a job's GPUs.
func TestNodeLookupBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 100; iter++ {
		var nodes []Node
		for k := 0; k < 1+rng.IntN(12); k++ {
			nodes = append(nodes, Node{ID: fmt.Sprintf("n%d", k), Type: "t", GPUs: 1 + rng.IntN(16)})
		}
		p := &problem{}
		require.NoError(t, p.indexNodes(nodes))
		rd := requestReader{p: p, node: -1}
		for q := 0; q < 50; q++ {
			n := rng.IntN(len(nodes))
			i := rng.IntN(nodes[n].GPUs)
			got, err := rd.nodeOf(&Request{Job: "j"}, GPU{Node: nodes[n].ID, Index: i})
			require.NoError(t, err)
			require.Equal(t, n, got)
			gn, gi := p.nodeOf(p.gid(n, i))
			require.Equal(t, [2]int{n, i}, [2]int{gn, gi})
			_, err = rd.nodeOf(&Request{Job: "j"}, GPU{Node: nodes[n].ID, Index: nodes[n].GPUs})
			require.Error(t, err, "index past the node")
		}
	}
}
