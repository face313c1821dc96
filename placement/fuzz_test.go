package placement

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzPlace decodes arbitrary bytes into nodes and requests (including
// invalid ones) and checks that Place never panics, returns either a typed
// input error or a result that gives no GPU to two jobs, stays within nodes
// and types, and keeps kept jobs unless it evicts them.
func FuzzPlace(f *testing.F) {
	f.Add([]byte{2, 4, 0, 4, 1, 8, 3, 1, 0, 2, 2, 0, 1, 4, 0, 0})
	f.Add([]byte{1, 6, 0, 6, 3, 4, 0, 0, 4, 0, 0, 4, 0, 0})
	f.Add([]byte{3, 8, 8, 8, 4, 16, 0, 0, 12, 0, 0, 1, 1, 3, 2, 1, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		nn := next() % 8
		var nodes []Node
		for i := 0; i < nn; i++ {
			g := next()%17 - 1 // -1 … 15: invalid sizes too
			nodes = append(nodes, Node{ID: fmt.Sprintf("n%d", i%7), Type: fmt.Sprintf("t%d", i%2), GPUs: g})
		}
		nr := next() % 10
		var reqs []Request
		for i := 0; i < nr; i++ {
			r := Request{Job: fmt.Sprintf("j%d", next()%12), Type: fmt.Sprintf("t%d", next()%3), GPUs: next()%20 - 1}
			for k := next() % 4; k > 0; k-- {
				r.Current = append(r.Current, GPU{Node: fmt.Sprintf("n%d", next()%8), Index: next()%18 - 1})
			}
			r.Pinned = next()%2 == 0
			if x := next(); x%3 == 1 { // a pool and a node count, valid or not
				r.NodeGPUs, r.Nodes = x%18-1, next()%5-1
			}
			reqs = append(reqs, r)
		}
		res, err := Place(nodes, reqs)
		if err != nil {
			var ie *InputError
			if !errors.Is(err, ErrInvalidInput) || !errors.As(err, &ie) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		size := map[string]int{}
		typ := map[string]string{}
		for _, n := range nodes {
			size[n.ID], typ[n.ID] = n.GPUs, n.Type
		}
		owner := map[GPU]string{}
		evicted := map[string]bool{}
		for _, e := range res.Evicted {
			evicted[e] = true
		}
		for _, r := range reqs {
			gs, ok := res.Placements[r.Job]
			if !ok {
				continue
			}
			if len(gs) != r.GPUs {
				t.Fatalf("job %s got %d GPUs, wants %d", r.Job, len(gs), r.GPUs)
			}
			spans := map[string]bool{}
			for _, g := range gs {
				spans[g.Node] = true
				if r.NodeGPUs > 0 && size[g.Node] != r.NodeGPUs {
					t.Fatalf("job %s off its pool of %d-GPU nodes: %v", r.Job, r.NodeGPUs, g)
				}
			}
			if r.Nodes > 0 && len(spans) != r.Nodes {
				t.Fatalf("job %s on %d nodes, wants %d", r.Job, len(spans), r.Nodes)
			}
			for _, g := range gs {
				if g.Index < 0 || g.Index >= size[g.Node] || typ[g.Node] != r.Type {
					t.Fatalf("job %s on bad GPU %v", r.Job, g)
				}
				if o, dup := owner[g]; dup {
					t.Fatalf("GPU %v given to %s and %s", g, o, r.Job)
				}
				owner[g] = r.Job
			}
			if r.Pinned && evicted[r.Job] {
				t.Fatalf("pinned job %s evicted", r.Job)
			}
		}
		for j := range res.Placements {
			found := false
			for _, r := range reqs {
				found = found || r.Job == j
			}
			if !found {
				t.Fatalf("placement for unknown job %s", j)
			}
		}
	})
}

// FuzzPlaceRounds decodes arbitrary bytes into a valid cluster (several
// types, node sizes 1-12 including non-powers of two) and two rounds of
// requests: the second round's jobs run on the GPUs the first round gave them
// (the random current GPUs a host passes), with random resizes, type changes,
// pins, departures and arrivals, capped at each type's capacity. Both rounds
// must succeed and pass checkResult (no GPU given twice, right types and
// counts, kept jobs keep their GPUs unless evicted, pinned jobs never
// evicted, shapes, Migrated exact), and the second round must not depend on
// the order of the requests.
func FuzzPlaceRounds(f *testing.F) {
	f.Add([]byte{3, 8, 8, 6, 5, 4, 1, 2, 8, 3, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{2, 6, 6, 4, 9, 0, 4, 1, 4, 2, 2, 1, 3, 0, 0, 7, 7, 7, 1})
	f.Add([]byte{4, 12, 12, 1, 3, 8, 0, 12, 1, 24, 0, 3, 5, 9, 2, 2, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		types := []string{"a", "b"}
		var nodes []Node
		capacity := map[string]int{}
		for i, nn := 0, next()%7+1; i < nn; i++ {
			n := Node{ID: fmt.Sprintf("n%d", i), Type: types[next()%2], GPUs: next()%12 + 1}
			nodes = append(nodes, n)
			capacity[n.Type] += n.GPUs
		}
		// Round 1: new jobs, total per type within capacity.
		demand := map[string]int{}
		var reqs []Request
		for i, nj := 0, next()%8; i < nj; i++ {
			r := Request{Job: fmt.Sprintf("j%d", i), Type: types[next()%2], GPUs: next() % 17}
			if r.GPUs > capacity[r.Type]-demand[r.Type] {
				r.GPUs = capacity[r.Type] - demand[r.Type]
			}
			demand[r.Type] += r.GPUs
			reqs = append(reqs, r)
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err)
		checkResult(t, nodes, reqs, res, false)

		// Round 2: current GPUs from round 1, random changes.
		demand = map[string]int{}
		var reqs2 []Request
		for i, r := range reqs {
			if next()%5 == 0 { // departed
				continue
			}
			r2 := Request{Job: r.Job, Type: r.Type, GPUs: r.GPUs, Current: res.Placements[r.Job], Pinned: next()%3 == 0}
			switch next() % 4 {
			case 0:
				r2.GPUs = next() % 17
			case 1:
				r2.Type = types[(i+next())%2]
			}
			if r2.GPUs > capacity[r2.Type]-demand[r2.Type] {
				r2.GPUs = capacity[r2.Type] - demand[r2.Type]
			}
			demand[r2.Type] += r2.GPUs
			reqs2 = append(reqs2, r2)
		}
		for i, nj := 0, next()%4; i < nj; i++ {
			r := Request{Job: fmt.Sprintf("new%d", i), Type: types[next()%2], GPUs: next() % 9}
			if r.GPUs > capacity[r.Type]-demand[r.Type] {
				r.GPUs = capacity[r.Type] - demand[r.Type]
			}
			demand[r.Type] += r.GPUs
			reqs2 = append(reqs2, r)
		}
		res2, err := Place(nodes, reqs2)
		require.NoError(t, err)
		checkResult(t, nodes, reqs2, res2, false)
		rev := append([]Request(nil), reqs2...)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		res3, err := Place(nodes, rev)
		require.NoError(t, err)
		require.Equal(t, res2, res3)
	})
}
