package ilp_test

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
	"github.com/stretchr/testify/require"
)

// BenchmarkBuild times the two phases before the search, validation and
// the model's build, on the hard corpus's 4,000- and 5,000-job instances,
// on the benchmark goroutine's thread CPU clock (cpu-ns/op, independent of
// the machine's load) and per option of the problem (cpu-ns/option);
// build-twin is the naive twin's build (the build before its single pass).
func BenchmarkBuild(b *testing.B) {
	for _, c := range ilptest.HardCorpus() {
		if c.Jobs < benchMinJobs {
			continue
		}
		p := ilptest.Hard(c)
		opts := 0
		for _, j := range p.Jobs {
			opts += len(j.Options)
		}
		name := strings.ReplaceAll(c.Name(), "+", "")
		b.Run(name+"/validate", func(b *testing.B) {
			benchCPU(b, opts, func() {
				if err := ilp.ValidateOnly(p); err != nil {
					b.Fatal(err)
				}
			})
		})
		build, err := ilp.ModelBuilder(p)
		if err != nil {
			b.Fatal(err)
		}
		twin, err := ilp.TwinModelBuilder(p)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []struct {
			name  string
			build func() int
		}{{"build", build}, {"build-twin", twin}} {
			b.Run(name+"/"+f.name, func(b *testing.B) {
				benchCPU(b, opts, func() {
					if f.build() == 0 {
						b.Fatal("empty model")
					}
				})
			})
		}
	}
}

// benchCPU runs f b.N times on a locked thread and reports its thread CPU
// time per run and per option.
func benchCPU(b *testing.B, opts int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := measure.ThreadCPU()
	for i := 0; i < b.N; i++ {
		f()
	}
	cpu := measure.ThreadCPU() - c0
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(opts), "cpu-ns/option")
}

// benchMinJobs is the smallest instance BenchmarkBuild measures.
var benchMinJobs = 4000

// TestBuildTwin builds the model of every instance of the hard corpus
// (up to 2,500 jobs with -short), of Sia-shaped instances and of small
// random ones, also with their options shuffled, with buildModel and with
// its naive twin (the build before the single pass) and asserts equal
// models.
func TestBuildTwin(t *testing.T) {
	for _, c := range ilptest.HardCorpus() {
		if testing.Short() && c.Jobs > 2500 {
			continue
		}
		require.NoError(t, ilp.TwinBuildCheck(ilptest.Hard(c)), c.Name())
	}
	for _, scale := range []int{1, 8, 32} {
		for _, pw := range []float64{-0.5, 0.5} {
			for seed := uint64(1); seed <= 3; seed++ {
				p := ilptest.Generate(ilptest.Config{Scale: scale, Jobs: 40 * scale, Seed: seed, Power: pw, PinFrac: 0.05})
				require.NoError(t, ilp.TwinBuildCheck(p), "scale %d p %v seed %d", scale, pw, seed)
			}
		}
	}
	rng := rand.New(rand.NewPCG(10, 1))
	for x := range 2000 {
		p := ilptest.Small(rng, 12, x%2 == 0)
		if x%3 == 0 {
			for i := range p.Jobs {
				j := &p.Jobs[i]
				perm := rng.Perm(len(j.Options))
				opts, pin := make([]ilp.Option, len(j.Options)), j.Pin
				for k, pk := range perm {
					opts[k] = j.Options[pk]
					if pk == pin {
						j.Pin = k
					}
				}
				j.Options = opts
			}
		}
		if p.Validate() != nil {
			continue
		}
		require.NoError(t, ilp.TwinBuildCheck(p), "small problem %d", x)
	}
}
