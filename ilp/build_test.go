package ilp_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkBuild times the two phases before the search, validation and
// the model's build, on the hard corpus's 4,000- and 5,000-job instances,
// on the benchmark goroutine's thread CPU clock (cpu-ns/op, independent of
// the machine's load) and per option of the problem (cpu-ns/option);
// validate-twin and build-twin are their naive twins (validate before it
// was split into its steps, the build before its single pass), and
// validate+build both in one pass (validateBuild, what Solve runs when
// its deadline is far enough).
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
		for _, f := range []struct {
			name     string
			validate func(*ilp.Problem) error
		}{{"validate", ilp.ValidateOnly}, {"validate-twin", ilp.TwinValidateOnly}} {
			b.Run(name+"/"+f.name, func(b *testing.B) {
				benchCPU(b, opts, func() {
					if err := f.validate(p); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
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
		}{{"build", build}, {"build-twin", twin}, {"validate+build", ilp.FusedBuilder(p)}} {
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
	r0 := measure.Read()
	for i := 0; i < b.N; i++ {
		f()
	}
	cpu := measure.Read().Since(r0)
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

// TestValidateTwin validates the hard corpus's instances, small random
// problems and corrupted copies of them (each breaking one rule) with
// Problem.validate and its naive twin (validate before it was split into
// its steps), with and without a warm start and with an expired clock, and
// asserts the same scans and the same errors.
func TestValidateTwin(t *testing.T) {
	for _, c := range ilptest.HardCorpus() {
		if testing.Short() && c.Jobs > 2500 {
			continue
		}
		same, err := ilp.TwinValidateCheck(ilptest.Hard(c), nil)
		require.NoError(t, same, c.Name())
		require.NoError(t, err, c.Name())
	}
	rng := rand.New(rand.NewPCG(11, 2))
	errs := 0
	for x := range 3000 {
		p := ilptest.Small(rng, 12, x%2 == 0)
		var warm []int
		if x%4 == 0 {
			for _, j := range p.Jobs {
				warm = append(warm, rng.IntN(len(j.Options)+2)-1)
			}
		}
		if x%5 != 0 {
			corrupt(rng, p)
		}
		same, err := ilp.TwinValidateCheck(p, warm)
		require.NoError(t, same, "problem %d", x)
		if err != nil {
			errs++
		}
	}
	assert.Greater(t, errs, 1000, "corrupted problems rejected")
}

// corrupt breaks one documented rule of p at random (or none, when p has
// nothing to break there).
func corrupt(rng *rand.Rand, p *ilp.Problem) {
	pick := func() *ilp.Option {
		for range 10 {
			if j := &p.Jobs[rng.IntN(len(p.Jobs))]; len(j.Options) > 0 {
				return &j.Options[rng.IntN(len(j.Options))]
			}
		}
		return &ilp.Option{}
	}
	if len(p.Jobs) == 0 {
		p.Sense = 7
		return
	}
	j := &p.Jobs[rng.IntN(len(p.Jobs))]
	switch rng.IntN(16) {
	case 0:
		pick().Type = "nope"
	case 1:
		pick().GPUs = -rng.IntN(2)
	case 2:
		pick().Value = math.NaN()
	case 3:
		pick().Value = math.Inf(1 - 2*rng.IntN(2))
	case 4:
		pick().Value += 0.003
	case 5:
		j.Unallocated = math.NaN()
	case 6:
		j.Unallocated += 0.004
	case 7:
		j.ID = p.Jobs[rng.IntN(len(p.Jobs))].ID
	case 8:
		j.ID = ""
	case 9:
		j.Pin = len(j.Options) + rng.IntN(2)
	case 10:
		pick().Value = 1e280
	case 11:
		p.Grid = math.NaN()
	case 12:
		for t := range p.Capacity {
			p.Reserved = map[string]int{t: p.Capacity[t] + 1}
			break
		}
	case 13:
		p.Quotas = append(p.Quotas, ilp.Quota{Name: "bad", Jobs: []int{0, 0}})
	case 14:
		p.Quotas = append(p.Quotas, ilp.Quota{Name: "bad", Type: "a", Types: []string{"b"}})
	case 15:
		for t := range p.Capacity {
			p.Capacity[t] = -1
			break
		}
	}
}
