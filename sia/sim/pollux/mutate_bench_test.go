package pollux

import (
	"fmt"
	"testing"
)

// BenchmarkMutateRepair measures one offspring's mutation and repair on the
// 16 vnodes of the 64-GPU cluster, with 1 job (the search's worst case: few
// distinct states, so many candidates are duplicates and redrawn) and 20.
func BenchmarkMutateRepair(b *testing.B) {
	for _, J := range []int{1, 4, 20} {
		b.Run(fmt.Sprintf("jobs=%d", J), func(b *testing.B) {
			const V = 16
			g := &gaState{J: J, V: V, cap: 4, base: make([]int8, J*V)}
			for j := 0; j < J; j++ {
				g.jobs = append(g.jobs, &jobInfo{maxRepl: 4 + 4*(j%4), base: g.base[j*V : (j+1)*V]})
				g.base[j*V+j%V] = 2
			}
			w := newWorker(V)
			r := wyrand{s: 1}
			pool := make([]*indiv, 64)
			for i := range pool {
				pool[i] = &indiv{x: make([]int8, J*V), st: make([]rowStat, J)}
				for k := range pool[i].x {
					if r.intN(4) == 0 {
						pool[i].x[k] = int8(r.intN(5))
					}
				}
				w.rng.s = r.next()
				g.repair(w, pool[i])
			}
			in := &indiv{x: make([]int8, J*V), st: make([]rowStat, J)}
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				copy(in.x, pool[i%len(pool)].x)
				w.rng.s = uint64(i)
				g.mutate(w, in.x)
				g.repair(w, in)
			}
			cpu.report(b)
		})
	}
}
