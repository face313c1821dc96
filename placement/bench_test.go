package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchScenario builds the default heterogeneous cluster (t4 6×4, a100 2×8,
// rtx 3×8) scaled by scale, a previous round of jobs placed by Place, and a
// next round in which most jobs keep their allocation and some are resized,
// moved to another type, finished or new.
func benchScenario(b testing.TB, scale, jobs int) ([]Node, []Request) {
	type tinfo struct {
		name string
		r, n int
	}
	types := []tinfo{{"t4", 4, 6 * scale}, {"a100", 8, 2 * scale}, {"rtx", 8, 3 * scale}}
	var nodes []Node
	for _, ti := range types {
		nodes = append(nodes, mkNodes(ti.name, ti.n, ti.r)...)
	}
	rng := rand.New(rand.NewPCG(uint64(scale), uint64(jobs)))
	items := map[string][]int{}
	draw := func() (string, int, bool) {
		for tries := 0; tries < 20; tries++ {
			ti := types[rng.IntN(len(types))]
			sh := shapesOf(ti.r, min(ti.n, 64/ti.r))
			// mostly small jobs, as in the paper's traces
			idx := 0
			switch u := rng.Float64(); {
			case u < 0.7:
			case u < 0.85:
				idx = 1
			case u < 0.93:
				idx = 2
			default:
				idx = 3 + rng.IntN(len(sh)-3)
			}
			s := sh[idx]
			if fits(append(append([]int(nil), items[ti.name]...), s), ti.r, ti.n) {
				items[ti.name] = append(items[ti.name], s)
				return ti.name, s, true
			}
		}
		return "", 0, false
	}
	// Jobs that do not fit are queued (a request for 0 GPUs), as after an
	// allocation that leaves some active jobs without GPUs.
	var prev []Request
	for k := 0; k < jobs; k++ {
		typ, s, _ := draw()
		prev = append(prev, Request{Job: fmt.Sprintf("j%05d", k), Type: typ, GPUs: s})
	}
	res, err := Place(nodes, prev)
	if err != nil {
		b.Fatal(err)
	}
	// next round: keep 85 %, drop 15 % and refill with new jobs
	items = map[string][]int{}
	var reqs []Request
	for _, p := range prev {
		if p.GPUs > 0 && rng.IntN(100) < 85 {
			p.Current = res.Placements[p.Job]
			items[p.Type] = append(items[p.Type], p.GPUs)
			reqs = append(reqs, p)
		}
	}
	for k := len(reqs); k < jobs; k++ {
		typ, s, _ := draw()
		reqs = append(reqs, Request{Job: fmt.Sprintf("n%05d", k), Type: typ, GPUs: s})
	}
	return nodes, reqs
}

func BenchmarkPlace(b *testing.B) {
	for _, c := range []struct{ scale, jobs int }{{1, 20}, {8, 300}, {32, 1500}} {
		b.Run(fmt.Sprintf("gpus=%d", 64*c.scale), func(b *testing.B) {
			nodes, reqs := benchScenario(b, c.scale, c.jobs)
			b.ReportAllocs()
			evicted := 0
			for b.Loop() {
				res, err := Place(nodes, reqs)
				if err != nil {
					b.Fatal(err)
				}
				evicted = len(res.Evicted)
			}
			b.ReportMetric(float64(len(reqs)), "jobs")
			placed := 0
			for _, r := range reqs {
				placed += r.GPUs
			}
			b.ReportMetric(float64(placed), "gpus-requested")
			b.ReportMetric(float64(evicted), "evictions")
		})
	}
}
