package placement

import (
	"errors"
	"fmt"
	"testing"
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
