package fairness

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linear is an isolated-JCT model: work / (speed · k).
func linear(work float64, speed map[string]float64) IsolatedFunc {
	return func(t string, k int) (float64, error) {
		s, ok := speed[t]
		if !ok {
			return 0, fmt.Errorf("type %s: %w", t, ErrUnavailable)
		}
		return work / (s * float64(k)), nil
	}
}

func TestFairJCTInterpolation(t *testing.T) {
	table := map[int]float64{1: 100, 2: 60, 3: 50, 4: 40}
	iso := func(k int) (float64, error) {
		v, ok := table[k]
		if !ok {
			return 0, fmt.Errorf("no run on %d GPUs", k)
		}
		return v, nil
	}
	for _, tc := range []struct {
		share, want float64
	}{
		{1, 100}, {2, 60}, {4, 40},
		{1.5, 80}, {2.25, 57.5}, {3.9, 41},
		{0.5, 200}, {0.25, 400},
	} {
		got, err := FairJCT(iso, tc.share)
		require.NoError(t, err)
		assert.InDelta(t, tc.want, got, 1e-9, "share %v", tc.share)
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := FairJCT(iso, bad)
		assert.ErrorIs(t, err, ErrInvalidInput, "share %v", bad)
	}
	_, err := FairJCT(iso, 4.5)
	assert.ErrorContains(t, err, "no run on 5 GPUs")
	_, err = FairJCT(func(int) (float64, error) { return math.NaN(), nil }, 2)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = FairJCT(func(int) (float64, error) { return 0, nil }, 0.5)
	assert.ErrorIs(t, err, ErrInvalidInput)
}

func TestComputeHomogeneous(t *testing.T) {
	// 16 GPUs, 4 jobs contending on average: fair share 4 GPUs. Isolated
	// JCT on k GPUs is 400/k, so T_fair = 100 and ρ = T_shared / 100.
	cluster := []TypeGPUs{{"t4", 16}}
	jobs := []Job{
		{ID: "fast", SharedJCT: 50, AvgJobs: 4, Isolated: linear(400, map[string]float64{"t4": 1})},
		{ID: "slow", SharedJCT: 250, AvgJobs: 4, Isolated: linear(400, map[string]float64{"t4": 1})},
		{ID: "frac", SharedJCT: 800, AvgJobs: 32, Isolated: linear(400, map[string]float64{"t4": 1})},
	}
	rs, err := Compute(cluster, jobs, nil)
	require.NoError(t, err)
	require.Len(t, rs, 3)
	assert.InDelta(t, 0.5, rs[0].Rho, 1e-12)
	assert.InDelta(t, 2.5, rs[1].Rho, 1e-12)
	// share 0.5 → T_fair = T(1)/0.5 = 800
	assert.InDelta(t, 1.0, rs[2].Rho, 1e-12)
	assert.Equal(t, []TypeRatio{{Type: "t4", Weight: 1, Share: 4, FairJCT: 100, Rho: 0.5}}, rs[0].PerType)
}

func TestComputeHeterogeneous(t *testing.T) {
	// N_t4 = 24, N_a100 = 16, N_avg = 8: shares 3 and 2. Speeds 1 and 3.
	cluster := []TypeGPUs{{"t4", 24}, {"a100", 16}}
	iso := linear(600, map[string]float64{"t4": 1, "a100": 3})
	j := Job{ID: "j", SharedJCT: 150, AvgJobs: 8, Isolated: iso}
	rs, err := Compute(cluster, []Job{j}, nil)
	require.NoError(t, err)
	// T_fair,t4 = 600/3 = 200 → ρ 0.75; T_fair,a100 = 600/6 = 100 → ρ 1.5
	want := 0.6*0.75 + 0.4*1.5
	assert.InDelta(t, want, rs[0].Rho, 1e-12)

	// the artifact: share N_total/N_avg = 5 (≤ both capacities), ratio of means
	rs, err = Compute(cluster, []Job{j}, &Options{Share: ShareOfCluster, Combine: RatioOfMeans})
	require.NoError(t, err)
	fair := 0.6*(600.0/5) + 0.4*(600.0/15)
	assert.InDelta(t, 150/fair, rs[0].Rho, 1e-12)
	assert.InDelta(t, 5.0, rs[0].PerType[0].Share, 1e-12)

	// share capped at the type's GPUs
	rs, err = Compute([]TypeGPUs{{"t4", 24}, {"a100", 2}}, []Job{{ID: "j", SharedJCT: 100, AvgJobs: 2, Isolated: iso}}, &Options{Share: ShareOfCluster})
	require.NoError(t, err)
	assert.InDelta(t, 13.0, rs[0].PerType[0].Share, 1e-12)
	assert.InDelta(t, 2.0, rs[0].PerType[1].Share, 1e-12)

	// a type the job cannot use is dropped and the weights renormalised
	rs, err = Compute([]TypeGPUs{{"t4", 24}, {"rtx", 24}}, []Job{{ID: "j", SharedJCT: 100, AvgJobs: 8, Isolated: iso}}, nil)
	require.NoError(t, err)
	require.Len(t, rs[0].PerType, 1)
	assert.Equal(t, 1.0, rs[0].PerType[0].Weight)
	assert.InDelta(t, 0.5, rs[0].Rho, 1e-12)
}

func TestComputeFairJCTGiven(t *testing.T) {
	cluster := []TypeGPUs{{"a", 30}, {"b", 10}}
	rs, err := Compute(cluster, []Job{{ID: "x", SharedJCT: 120, FairJCT: map[string]float64{"a": 100, "b": 60}}}, nil)
	require.NoError(t, err)
	assert.InDelta(t, 0.75*1.2+0.25*2, rs[0].Rho, 1e-12)
	rs, err = Compute(cluster, []Job{{ID: "x", SharedJCT: 120, FairJCT: map[string]float64{"b": 60}}}, &Options{Combine: RatioOfMeans})
	require.NoError(t, err)
	assert.InDelta(t, 2.0, rs[0].Rho, 1e-12)
}

// TestMeanOfRatiosBruteForce checks Compute against a direct evaluation of
// Eq. 6 on random inputs, and that ρ scales linearly with T_shared.
func TestMeanOfRatiosBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 500; iter++ {
		var cluster []TypeGPUs
		speed := map[string]float64{}
		for i := 0; i < 1+rng.IntN(4); i++ {
			name := fmt.Sprintf("g%d", i)
			cluster = append(cluster, TypeGPUs{name, 1 + rng.IntN(64)})
			speed[name] = 0.5 + rng.Float64()*3
		}
		work := 100 + rng.Float64()*1e4
		navg := 0.3 + rng.Float64()*20
		shared := rng.Float64() * 1e4
		iso := func(typ string, k int) (float64, error) {
			// diminishing returns: T = work / (speed · k^0.8)
			return work / (speed[typ] * math.Pow(float64(k), 0.8)), nil
		}
		rs, err := Compute(cluster, []Job{{ID: "j", SharedJCT: shared, AvgJobs: navg, Isolated: iso}}, nil)
		require.NoError(t, err)
		total := 0.0
		for _, c := range cluster {
			total += float64(c.GPUs)
		}
		want := 0.0
		for _, c := range cluster {
			v := math.Min(float64(c.GPUs)/navg, float64(c.GPUs))
			var tf float64
			if v < 1 {
				t1, _ := iso(c.Type, 1)
				tf = t1 / v
			} else {
				lo, _ := iso(c.Type, int(math.Floor(v)))
				hi, _ := iso(c.Type, int(math.Ceil(v)))
				tf = lo + (hi-lo)*(v-math.Floor(v))
			}
			want += float64(c.GPUs) / total * shared / tf
		}
		require.InDelta(t, want, rs[0].Rho, 1e-9*math.Max(1, want))
		rs2, err := Compute(cluster, []Job{{ID: "j", SharedJCT: 2 * shared, AvgJobs: navg, Isolated: iso}}, nil)
		require.NoError(t, err)
		require.InDelta(t, 2*rs[0].Rho, rs2[0].Rho, 1e-9*math.Max(1, want))
	}
}

func TestComputeErrors(t *testing.T) {
	iso := linear(100, map[string]float64{"a": 1})
	ok := []TypeGPUs{{"a", 4}}
	for _, tc := range []struct {
		name    string
		cluster []TypeGPUs
		jobs    []Job
		opts    *Options
		sub     []string
	}{
		{"empty type", []TypeGPUs{{"", 4}}, nil, nil, []string{"empty GPU type"}},
		{"duplicate type", []TypeGPUs{{"a", 4}, {"a", 2}}, nil, nil, []string{`type "a"`, "duplicate"}},
		{"zero GPUs", []TypeGPUs{{"a", 0}}, nil, nil, []string{`type "a"`, "got 0"}},
		{"bad option", ok, nil, &Options{Share: 7}, []string{"Options.Share"}},
		{"bad combine", ok, nil, &Options{Combine: -1}, []string{"Options.Combine"}},
		{"empty job", ok, []Job{{SharedJCT: 1, AvgJobs: 1, Isolated: iso}}, nil, []string{"empty job ID"}},
		{"duplicate job", ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: 1, Isolated: iso}, {ID: "j", SharedJCT: 1, AvgJobs: 1, Isolated: iso}}, nil, []string{`job "j"`, "duplicate"}},
		{"NaN shared", ok, []Job{{ID: "j", SharedJCT: math.NaN(), AvgJobs: 1, Isolated: iso}}, nil, []string{`job "j"`, "SharedJCT", "NaN"}},
		{"negative shared", ok, []Job{{ID: "j", SharedJCT: -3, AvgJobs: 1, Isolated: iso}}, nil, []string{`job "j"`, "SharedJCT", "-3"}},
		{"inf shared", ok, []Job{{ID: "j", SharedJCT: math.Inf(1), AvgJobs: 1, Isolated: iso}}, nil, []string{`job "j"`, "SharedJCT"}},
		{"zero avg", ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: 0, Isolated: iso}}, nil, []string{`job "j"`, "AvgJobs"}},
		{"NaN avg", ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: math.NaN(), Isolated: iso}}, nil, []string{`job "j"`, "AvgJobs"}},
		{"no isolated", ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: 1}}, nil, []string{`job "j"`, "neither"}},
		{"negative isolated", ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: 1, Isolated: func(string, int) (float64, error) { return -1, nil }}}, nil, []string{`job "j"`, `type "a"`, "-1"}},
		{"NaN fair", ok, []Job{{ID: "j", SharedJCT: 1, FairJCT: map[string]float64{"a": math.NaN()}}}, nil, []string{`job "j"`, `type "a"`, "NaN"}},
		{"zero fair", ok, []Job{{ID: "j", SharedJCT: 1, FairJCT: map[string]float64{"a": 0}}}, nil, []string{`job "j"`, "FairJCT"}},
		{"unknown fair type", ok, []Job{{ID: "j", SharedJCT: 1, FairJCT: map[string]float64{"zz": 1}}}, nil, []string{`job "j"`, `type "zz"`}},
		{"no usable type", ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: 1, Isolated: linear(1, nil)}}, nil, []string{`job "j"`, "no GPU type"}},
		{"empty fair map", ok, []Job{{ID: "j", SharedJCT: 1, FairJCT: map[string]float64{}}}, nil, []string{`job "j"`, "no GPU type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.cluster, tc.jobs, tc.opts)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			for _, s := range tc.sub {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
	// a failing isolated run is wrapped with the job and type
	boom := errors.New("simulation crashed")
	_, err := Compute(ok, []Job{{ID: "j", SharedJCT: 1, AvgJobs: 1, Isolated: func(string, int) (float64, error) { return 0, boom }}}, nil)
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), `job "j" type "a"`)
}

func TestSummaryFunctions(t *testing.T) {
	rhos := []float64{0.5, 1.2, 0.9, 1.0, 3.0, 0.9}
	w, err := Worst(rhos)
	require.NoError(t, err)
	assert.Equal(t, 3.0, w)
	u, err := UnfairFraction(rhos)
	require.NoError(t, err)
	assert.InDelta(t, 2.0/6, u, 1e-12)
	cdf, err := CDF(rhos)
	require.NoError(t, err)
	assert.Equal(t, []Point{{0.5, 1.0 / 6}, {0.9, 3.0 / 6}, {1.0, 4.0 / 6}, {1.2, 5.0 / 6}, {3.0, 1}}, cdf)
	p, err := Percentile(rhos, 50)
	require.NoError(t, err)
	assert.InDelta(t, 0.95, p, 1e-12) // numpy.percentile([.5,.9,.9,1,1.2,3], 50)
	p, err = Percentile(rhos, 90)
	require.NoError(t, err)
	assert.InDelta(t, 2.1, p, 1e-12) // numpy: 1.2 + 0.5·1.8
	s, err := Summarize(rhos)
	require.NoError(t, err)
	assert.Equal(t, 6, s.Jobs)
	assert.Equal(t, 3.0, s.Worst)
	assert.Equal(t, 0.5, s.P0)
	assert.Equal(t, 3.0, s.P100)
	assert.InDelta(t, 0.95, s.P50, 1e-12)
	assert.InDelta(t, 7.5/6, s.Mean, 1e-12)
	assert.InDelta(t, u, s.UnfairFraction, 1e-12)

	// empty input
	w, err = Worst(nil)
	require.NoError(t, err)
	assert.Zero(t, w)
	u, err = UnfairFraction(nil)
	require.NoError(t, err)
	assert.Zero(t, u)
	cdf, err = CDF(nil)
	require.NoError(t, err)
	assert.Nil(t, cdf)
	s, err = Summarize(nil)
	require.NoError(t, err)
	assert.Zero(t, s)
	_, err = Percentile(nil, 50)
	assert.ErrorIs(t, err, ErrInvalidInput)

	// bad input names the index
	bad := []float64{1, math.NaN()}
	for name, f := range map[string]func() error{
		"Worst":          func() error { _, err := Worst(bad); return err },
		"UnfairFraction": func() error { _, err := UnfairFraction(bad); return err },
		"CDF":            func() error { _, err := CDF(bad); return err },
		"Percentile":     func() error { _, err := Percentile(bad, 5); return err },
		"Summarize":      func() error { _, err := Summarize(bad); return err },
	} {
		err := f()
		require.ErrorIs(t, err, ErrInvalidInput, name)
		assert.Contains(t, err.Error(), "ratio 1", name)
	}
	_, err = Percentile(rhos, 101)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = Percentile(rhos, math.NaN())
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = Worst([]float64{-0.5})
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// TestPercentileBruteForce checks percentiles and the CDF against their
// definitions on random data.
func TestPercentileBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.IntN(40)
		rhos := make([]float64, n)
		for i := range rhos {
			rhos[i] = math.Round(rng.Float64()*30) / 10 // ties on purpose
		}
		s := slices.Clone(rhos)
		sort.Float64s(s)
		q := rng.Float64() * 100
		got, err := Percentile(rhos, q)
		require.NoError(t, err)
		// brute force: the interpolated order statistic
		h := q / 100 * float64(n-1)
		lo, hi := int(math.Floor(h)), int(math.Ceil(h))
		want := s[lo] + (s[hi]-s[lo])*(h-float64(lo))
		require.InDelta(t, want, got, 1e-12)
		require.GreaterOrEqual(t, got, s[0])
		require.LessOrEqual(t, got, s[n-1])
		cdf, err := CDF(rhos)
		require.NoError(t, err)
		for _, pt := range cdf {
			cnt := 0
			for _, x := range rhos {
				if x <= pt.Rho {
					cnt++
				}
			}
			require.InDelta(t, float64(cnt)/float64(n), pt.P, 1e-12)
		}
		require.Equal(t, 1.0, cdf[len(cdf)-1].P)
	}
}

func TestInputErrorFormat(t *testing.T) {
	e := &InputError{Job: "j", Type: "a", Index: -1, Field: "FairJCT", Reason: "bad"}
	assert.Equal(t, `fairness: invalid input: job "j" type "a" FairJCT: bad`, e.Error())
	e = &InputError{Index: 3, Field: "rho", Reason: "bad"}
	assert.Equal(t, `fairness: invalid input: ratio 3 rho: bad`, e.Error())
}
