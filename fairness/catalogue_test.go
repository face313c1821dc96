package fairness

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Catalogue of bad inputs beyond TestComputeErrors: every exported function
// that takes caller data, each kind of bad value. Each gives an error
// wrapping ErrInvalidInput (an *InputError) whose message names the offending
// job, type, ratio index or field; none panics.

func requireInput(t *testing.T, err error, names ...string) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidInput)
	var ie *InputError
	assert.True(t, errors.As(err, &ie), "not an *InputError: %v", err)
	for _, n := range names {
		assert.Contains(t, err.Error(), n)
	}
}

func constIso(v float64) IsolatedFunc {
	return func(string, int) (float64, error) { return v, nil }
}

func TestCatalogueCompute(t *testing.T) {
	iso := linear(100, map[string]float64{"a": 1, "b": 2})
	ok := []TypeGPUs{{"a", 4}, {"b", 2}}
	job := func(edit func(*Job)) []Job {
		j := Job{ID: "j7", SharedJCT: 10, AvgJobs: 2, Isolated: iso}
		edit(&j)
		return []Job{{ID: "ok", SharedJCT: 1, AvgJobs: 1, Isolated: iso}, j}
	}
	cases := []struct {
		name    string
		cluster []TypeGPUs
		jobs    []Job
		opts    *Options
		names   []string
	}{
		{"negative GPUs", []TypeGPUs{{"a", -4}}, nil, nil, []string{`type "a"`, "GPUs"}},
		{"MinInt GPUs", []TypeGPUs{{"a", math.MinInt}}, nil, nil, []string{`type "a"`, "GPUs"}},
		{"GPUs overflow the total", []TypeGPUs{{"a", math.MaxInt}, {"b", math.MaxInt}}, nil, nil, []string{`type "a"`, "MaxGPUs"}},
		{"GPUs above MaxGPUs", []TypeGPUs{{"a", 4}, {"b", MaxGPUs}}, nil, nil, []string{`type "b"`, "MaxGPUs"}},
		{"empty type after valid", []TypeGPUs{{"a", 4}, {"", 4}}, nil, nil, []string{"Type", "empty GPU type"}},
		{"Share out of range", ok, nil, &Options{Share: -1}, []string{"Options.Share"}},
		{"Combine out of range", ok, nil, &Options{Combine: 2}, []string{"Options.Combine"}},
		{"empty ID", ok, job(func(j *Job) { j.ID = "" }), nil, []string{"ID", "empty job ID"}},
		{"duplicate ID", ok, job(func(j *Job) { j.ID = "ok" }), nil, []string{`job "ok"`, "duplicate"}},
		{"SharedJCT -Inf", ok, job(func(j *Job) { j.SharedJCT = math.Inf(-1) }), nil, []string{`job "j7"`, "SharedJCT"}},
		{"SharedJCT tiny negative", ok, job(func(j *Job) { j.SharedJCT = -math.SmallestNonzeroFloat64 }), nil, []string{`job "j7"`, "SharedJCT"}},
		{"AvgJobs negative", ok, job(func(j *Job) { j.AvgJobs = -2 }), nil, []string{`job "j7"`, "AvgJobs"}},
		{"AvgJobs +Inf", ok, job(func(j *Job) { j.AvgJobs = math.Inf(1) }), nil, []string{`job "j7"`, "AvgJobs"}},
		{"isolated NaN", ok, job(func(j *Job) { j.Isolated = constIso(math.NaN()) }), nil, []string{`job "j7"`, `type "a"`, "NaN"}},
		{"isolated +Inf", ok, job(func(j *Job) { j.Isolated = constIso(math.Inf(1)) }), nil, []string{`job "j7"`, `type "a"`, "+Inf"}},
		{"isolated zero", ok, job(func(j *Job) { j.Isolated = constIso(0) }), nil, []string{`job "j7"`, `type "a"`, "got 0"}},
		{"all types unavailable", ok, job(func(j *Job) {
			j.Isolated = func(string, int) (float64, error) { return 0, fmt.Errorf("oom: %w", ErrUnavailable) }
		}), nil, []string{`job "j7"`, "no GPU type"}},
		{"FairJCT +Inf", ok, job(func(j *Job) { j.FairJCT = map[string]float64{"a": math.Inf(1)} }), nil, []string{`job "j7"`, `type "a"`, "FairJCT"}},
		{"FairJCT negative", ok, job(func(j *Job) { j.FairJCT = map[string]float64{"b": -1} }), nil, []string{`job "j7"`, `type "b"`, "FairJCT"}},
		{"FairJCT empty type", ok, job(func(j *Job) { j.FairJCT = map[string]float64{"": 1} }), nil, []string{`job "j7"`, "FairJCT", "not in the cluster"}},
		// Several unknown types: the error names the first in sorted order,
		// whatever the map iteration order.
		{"FairJCT unknown types", ok, job(func(j *Job) { j.FairJCT = map[string]float64{"zz": 1, "c": 1, "m": 1, "x": 1} }), nil, []string{`job "j7"`, `type "c"`}},
		// A ratio that overflows float64 is an error, not +Inf.
		{"ratio overflows", ok, job(func(j *Job) { j.SharedJCT, j.FairJCT = math.MaxFloat64, map[string]float64{"a": 1e-300} }), nil, []string{`job "j7"`, `type "a"`, "overflows"}},
		{"ratio of means overflows", ok, job(func(j *Job) { j.SharedJCT, j.FairJCT = math.MaxFloat64, map[string]float64{"a": 0.5, "b": 1e308} }), &Options{Combine: RatioOfMeans}, []string{`job "j7"`, "overflows"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k := 0; k < 5; k++ { // same error every time (map order)
				rs, err := Compute(c.cluster, c.jobs, c.opts)
				assert.Nil(t, rs)
				requireInput(t, err, c.names...)
			}
		})
	}
	// Valid edge cases: no jobs, no types with no jobs, a zero shared JCT,
	// a huge share (capped at N_g), tiny AvgJobs.
	rs, err := Compute(nil, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, rs)
	rs, err = Compute([]TypeGPUs{{"a", MaxGPUs}}, []Job{{ID: "z", SharedJCT: 0, AvgJobs: 1e-300, Isolated: constIso(5)}}, nil)
	require.Error(t, err, "share capped at N_g = 2^40 GPUs is above FairJCT's int32 range")
	requireInput(t, err, `job "z"`, `type "a"`)
	rs, err = Compute(ok, []Job{{ID: "z", SharedJCT: 0, AvgJobs: 1e-300, Isolated: constIso(5)}}, nil)
	require.NoError(t, err)
	assert.Equal(t, 0.0, rs[0].Rho)
	assert.Equal(t, 4.0, rs[0].PerType[0].Share)
}

func TestCatalogueFairJCT(t *testing.T) {
	iso := func(k int) (float64, error) { return 100 / float64(k), nil }
	for _, share := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), -math.SmallestNonzeroFloat64, math.MaxInt32 + 1.5, math.MaxFloat64} {
		_, err := FairJCT(iso, share)
		requireInput(t, err, "share")
	}
	_, err := FairJCT(nil, 2)
	requireInput(t, err, "isolated", "nil")
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := FairJCT(func(int) (float64, error) { return v, nil }, 2.5)
		requireInput(t, err, "isolated JCT", "on 2 GPUs")
	}
	// The second call (⌈share⌉) is checked too.
	_, err = FairJCT(func(k int) (float64, error) {
		if k == 3 {
			return math.NaN(), nil
		}
		return 1, nil
	}, 2.5)
	requireInput(t, err, "on 3 GPUs", "NaN")
}

func TestCatalogueSummaries(t *testing.T) {
	funcs := map[string]func([]float64) error{
		"Worst":          func(r []float64) error { _, err := Worst(r); return err },
		"UnfairFraction": func(r []float64) error { _, err := UnfairFraction(r); return err },
		"CDF":            func(r []float64) error { _, err := CDF(r); return err },
		"Percentile":     func(r []float64) error { _, err := Percentile(r, 50); return err },
		"Summarize":      func(r []float64) error { _, err := Summarize(r); return err },
	}
	n := 0
	for name, f := range funcs {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1, -math.SmallestNonzeroFloat64} {
			err := f([]float64{0.5, 1, 2, bad, 3})
			requireInput(t, err, "ratio 3", "rho")
			n++
		}
		_ = name
	}
	for _, q := range []float64{math.NaN(), -0.001, 100.001, math.Inf(1), math.Inf(-1)} {
		_, err := Percentile([]float64{1, 2}, q)
		requireInput(t, err, "q")
		n++
	}
	for _, rs := range [][]float64{nil, {}} {
		_, err := Percentile(rs, 50)
		requireInput(t, err, "rhos", "no ratios")
		n++
	}
	t.Logf("%d bad summary inputs", n)
	// Huge but valid ratios: the mean must not overflow to +Inf.
	s, err := Summarize([]float64{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64 / 2})
	require.NoError(t, err)
	assert.False(t, math.IsInf(s.Mean, 0))
	assert.InEpsilon(t, math.MaxFloat64*5/6, s.Mean, 1e-12)
	p, err := Percentile([]float64{0, math.MaxFloat64}, 50)
	require.NoError(t, err)
	assert.InEpsilon(t, math.MaxFloat64/2, p, 1e-12)
}
