package ilp_test

import (
	"strings"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// BenchmarkDualPass measures one pass of the root's smoothed dual over
// every job of the hard corpus's 5,000-job instances (and of the two
// 5,000-job extras with 6 and 12 queues), and BenchmarkMarginalGreedy the
// tight path's first incumbent at the same multipliers.
func BenchmarkDualPass(b *testing.B) {
	for _, c := range benchInstances() {
		p := ilptest.Hard(c)
		pass, _ := ilp.DualPassFunc(p)
		b.Run(strings.ReplaceAll(c.Name(), "+", ""), func(b *testing.B) {
			benchCPU(b, optionsOf(p), pass)
		})
	}
}

func BenchmarkMarginalGreedy(b *testing.B) {
	for _, c := range benchInstances() {
		p := ilptest.Hard(c)
		_, greedy := ilp.DualPassFunc(p)
		b.Run(strings.ReplaceAll(c.Name(), "+", ""), func(b *testing.B) {
			benchCPU(b, optionsOf(p), func() { greedy() })
		})
	}
}

func benchInstances() []ilptest.HardConfig {
	var out []ilptest.HardConfig
	for _, c := range append(ilptest.HardCorpus(), ilptest.HardExtra()...) {
		if c.Jobs == 5000 && c.Quotas {
			out = append(out, c)
		}
	}
	return out
}

// BenchmarkBuildQuotas is BenchmarkBuild's build and validate+build on
// the 5,000-job instances with quotas, the extras beside the corpus
// included (ilptest.HardExtra: 6 and 12 overlapping queues, where nearly
// every job has a quota list of its own).
func BenchmarkBuildQuotas(b *testing.B) {
	for _, c := range append(ilptest.HardCorpus(), ilptest.HardExtra()...) {
		if c.Jobs < 5000 || !c.Quotas {
			continue
		}
		p := ilptest.Hard(c)
		build, err := ilp.ModelBuilder(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []struct {
			name  string
			build func() int
		}{{"build", build}, {"validate+build", ilp.FusedBuilder(p)}} {
			b.Run(strings.ReplaceAll(c.Name(), "+", "")+"/"+f.name, func(b *testing.B) {
				benchCPU(b, optionsOf(p), func() { f.build() })
			})
		}
	}
}

// optionsOf is the number of options of p's jobs.
func optionsOf(p *ilp.Problem) int {
	n := 0
	for _, j := range p.Jobs {
		n += len(j.Options)
	}
	return n
}
