package ilp

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGreedyMerge: greedy, which merges the jobs' sorted options through a
// heap, chooses exactly what the scan of every option sorted at once
// (greedyRef, its former implementation) does.
func TestGreedyMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 300; it++ {
		p := randomCoreProblem(rng, it%2 == 0)
		if it%10 == 0 { // hundreds of jobs, with pins and a quota
			p = wideProblem(50+it, 4+it%9)
		}
		sc, err := p.validate(nil, nil)
		if err != nil {
			continue
		}
		m := buildModel(p, sc, nil)
		sr := newSearch(newClock(t.Context(), now(), 0), m, &Settings{})
		free := m.allJobs()
		lam := make([]float64, m.nrows)
		for r := range lam {
			lam[r] = rng.Float64() * m.ub[r]
		}
		a := sr.greedy(free, m.cap, lam)
		b := sr.greedyRef(free, m.cap, lam)
		require.Equal(t, b, a, "problem %d", it)
	}
}

// greedyRef is greedy as it was: every option sorted at once. It returns a choice for the free jobs (parallel to free) that fits
// capv: options in increasing reduced cost at lam (ties: larger profit, then
// job order), then passes that upgrade any job whose better option fits.
func (sr *search) greedyRef(free []int32, capv []int, lam []float64) []int {
	m := sr.m
	type pair struct {
		k, o int
		rc   float64
		p    float64
	}
	var ps []pair
	for k, i := range free {
		j := &m.jobs[i]
		h, _ := j.best(lam)
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := h - (o.p - j.groups[o.grp].price(lam)*float64(o.g))
			ps = append(ps, pair{k, oi, rc, o.p})
		}
	}
	slices.SortFunc(ps, func(a, b pair) int {
		switch {
		case a.rc != b.rc:
			return cmp.Compare(a.rc, b.rc)
		case a.p != b.p:
			return cmp.Compare(b.p, a.p)
		case a.k != b.k:
			return a.k - b.k
		}
		return a.o - b.o
	})
	choice := make([]int, len(free))
	for k := range choice {
		choice[k] = -1
	}
	left := append([]int(nil), capv...)
	for _, q := range ps {
		j := &m.jobs[free[q.k]]
		if choice[q.k] < 0 && sr.fits(left, j, q.o) {
			choice[q.k] = q.o
			apply(left, j, q.o, 1)
		}
	}
	for pass := 0; pass < 3; pass++ {
		changed := false
		for k, i := range free {
			c := choice[k]
			bo := sr.upgrade(left, &m.jobs[i], c)
			if bo != c {
				choice[k] = bo
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return choice
}
