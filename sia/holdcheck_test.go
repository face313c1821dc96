package sia

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/ilp"
	"github.com/stretchr/testify/require"
)

// rowsHoldTwin is holdCheck's brute-force twin: the limits recomputed from
// every placed job (GPUs non-nil, each entry with its Charge, in every pool
// it uses) plus job extra, which keeps exactly its entry's GPUs.
func rowsHoldTwin(m *goodputMatrix, p *ilp.Problem, choice []int, gpus [][]GPU, extra int) bool {
	pool := map[string]int{}
	quota := make([]int, len(p.Quotas))
	for i, c := range choice {
		if c < 0 || (gpus[i] == nil && i != extra) {
			continue
		}
		e := &m.Rows[i].Entries[c]
		uses := usesOf(e, i == extra) // job extra keeps exactly the GPUs it holds
		for _, o := range uses {
			pool[o.Type] += o.GPUs
		}
		for q := range p.Quotas {
			qu := &p.Quotas[q]
			if qu.AllJobs || slices.Contains(qu.Jobs, i) {
				quota[q] += quotaUse(qu, uses)
			}
		}
	}
	for name, used := range pool {
		if c, ok := m.Capacity[name]; ok && used > c-p.Reserved[name] {
			return false
		}
	}
	for q := range p.Quotas {
		if quota[q] > p.Quotas[q].Limit {
			return false
		}
	}
	return true
}

// TestHoldCheckTwin: on random matrices with pools, reservations and
// quotas, holdCheck (incremental, as keepUnplaced uses it: check, then add
// the jobs that hold) agrees with the brute-force twin at every step.
func TestHoldCheckTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for iter := 0; iter < 500; iter++ {
		n := 1 + rng.IntN(8)
		m := &goodputMatrix{Capacity: map[string]int{"A": 4 + rng.IntN(12), "B/4": 4 + rng.IntN(8), "B/8": 8 + rng.IntN(16)},
			Pools: map[string][]string{"B": {"B/4", "B/8"}}, Reserved: map[string]int{}}
		if rng.IntN(2) == 0 {
			m.Reserved["A"] = rng.IntN(4)
		}
		configs := []configset.Config{{Type: "A", Nodes: 1, GPUs: 1}, {Type: "A", Nodes: 1, GPUs: 4}, {Type: "B", NodeGPUs: 4, Nodes: 1, GPUs: 2}, {Type: "B", NodeGPUs: 8, Nodes: 1, GPUs: 6}}
		for i := 0; i < n; i++ {
			r := matrixRow{Job: fmt.Sprint("j", i), Index: i, Current: -1, Pin: -1}
			for k := 0; k < 1+rng.IntN(3); k++ {
				c := configs[rng.IntN(len(configs))]
				r.Entries = append(r.Entries, matrixEntry{Config: c, Charge: c.GPUs + rng.IntN(2)})
			}
			m.Rows = append(m.Rows, r)
		}
		for q := 0; q < rng.IntN(3); q++ {
			qu := ilp.Quota{Name: fmt.Sprint("q", q), Limit: rng.IntN(10), AllJobs: rng.IntN(3) == 0}
			if rng.IntN(2) == 0 {
				qu.Type = "A"
			} else if rng.IntN(2) == 0 {
				qu.Types = []string{"B/4", "B/8"}
			}
			if !qu.AllJobs {
				for i := 0; i < n; i++ {
					if rng.IntN(2) == 0 {
						qu.Jobs = append(qu.Jobs, i)
					}
				}
			}
			m.Quotas = append(m.Quotas, qu)
		}
		p := m.Problem()
		choice := make([]int, n)
		gpus := make([][]GPU, n)
		for i := range choice {
			choice[i] = rng.IntN(len(m.Rows[i].Entries)+1) - 1
			if choice[i] >= 0 && rng.IntN(2) == 0 {
				gpus[i] = []GPU{{Node: "x", Index: i}}
			}
		}
		h := newHoldCheck(m, p, choice, gpus)
		for i := range choice {
			if gpus[i] != nil {
				continue
			}
			c := rng.IntN(len(m.Rows[i].Entries))
			old := choice[i]
			choice[i] = c
			want := rowsHoldTwin(m, p, choice, gpus, i)
			require.Equal(t, want, h.holds(i, c), "iter %d job %d entry %d", iter, i, c)
			if !want {
				choice[i] = old
				continue
			}
			h.add(i, c)
			gpus[i] = []GPU{{Node: "x", Index: i}}
		}
	}
}
