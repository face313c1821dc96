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
		set := newIDSet(len(reqs), func(k int) string { return reqs[k].Job }, nil)
		seen := map[string]bool{}
		for k := range reqs {
			require.Equal(t, !seen[reqs[k].Job], set.add(k), "request %d (%q)", k, reqs[k].Job)
			seen[reqs[k].Job] = true
		}
	}
}

// TestNodeLookupBruteForce: the slots of current GPUs named by node ID
// (looked up with the last node cached) and the GPU → node array agree
// with a search over the nodes, in any order of a job's GPUs; an index past
// its node is an error.
func TestNodeLookupBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 100; iter++ {
		var nodes []Node
		for k := 0; k < 1+rng.IntN(12); k++ {
			nodes = append(nodes, Node{ID: fmt.Sprintf("n%d", k), Type: "t", GPUs: 1 + rng.IntN(16)})
		}
		p := &problem{}
		require.NoError(t, p.indexNodes(nodes, true))
		var want [][2]int
		r := Request{Job: "j"}
		for q := 0; q < 50; q++ {
			n := rng.IntN(len(nodes))
			i := rng.IntN(nodes[n].GPUs)
			r.Current = append(r.Current, GPU{Node: nodes[n].ID, Index: i})
			want = append(want, [2]int{n, i})
		}
		r.Current = append(r.Current, GPU{Node: "none", Index: 0})
		slots := p.slotsOf([]Request{r})[0]
		require.Len(t, slots, len(want)+1)
		rd := requestReader{p: p}
		for k, w := range want {
			require.Equal(t, Slot{Node: int32(w[0]), Index: int32(w[1])}, slots[k])
			got, err := rd.nodeOf(&r, k, slots[k])
			require.NoError(t, err)
			require.Equal(t, w[0], got)
			gn, gi := p.nodeOf(p.gid(w[0], w[1]))
			require.Equal(t, w, [2]int{gn, gi})
			_, err = rd.nodeOf(&Request{Job: "j"}, k, Slot{Node: int32(w[0]), Index: int32(nodes[w[0]].GPUs)})
			require.Error(t, err, "index past the node")
		}
		_, err := rd.nodeOf(&r, len(want), slots[len(want)])
		require.ErrorContains(t, err, "unknown node")
	}
}

// TestBestFitBruteForce: best fit by the free-count index agrees with a
// scan of the pool's nodes, on random fleets (node sizes mixed within a
// type, so that nodes lie in two pools) after random GPUs are taken and
// given back, for every part size and random sets of excluded nodes.
func TestBestFitBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	checked := 0
	for iter := 0; iter < 200; iter++ {
		var nodes []Node
		for k := 0; k < 1+rng.IntN(150); k++ {
			nodes = append(nodes, Node{ID: fmt.Sprintf("n%d", k), Type: fmt.Sprintf("t%d", rng.IntN(2)), GPUs: 1 + rng.IntN(16)})
		}
		p, err := indexProblem(nodes, false)
		require.NoError(t, err)
		p.jobs = make([]jobInfo, 3)
		for j := range p.jobs {
			p.jobs[j].req = &Request{Job: fmt.Sprint(j), GPUs: 1 + rng.IntN(8)}
		}
		for step := 0; step < 300; step++ {
			j := rng.IntN(len(p.jobs))
			if rng.IntN(4) == 0 {
				p.release(j)
			} else if g := rng.IntN(len(p.gpuNode)); p.nodes[p.gpuNode[g]].owner[g-p.base[p.gpuNode[g]]] < 0 {
				p.assign(j, g)
			}
			p.stamp++
			used := usedSet{p.used, p.stamp}
			for k := rng.IntN(4); k > 0; k-- {
				used.add(rng.IntN(len(nodes)))
			}
			pl := rng.IntN(len(p.pools))
			size := 1 + rng.IntN(17)
			require.Equal(t, p.bestFitScan(pl, size, used), p.bestFit(pl, size, used), "iter %d step %d pool %v size %d", iter, step, p.pools[pl], size)
			checked++
		}
	}
	t.Logf("%d look-ups", checked)
}
