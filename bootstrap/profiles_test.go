package bootstrap

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/shareddata"
)

func TestReadPlacements(t *testing.T) {
	in := "placement,local_bsz,step_time,sync_time\n1,4,0.45,0.013\n13,8.0,0.9,0.2\n"
	rows, err := ReadPlacements(strings.NewReader(in), "p.csv")
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, PlacementRow{"1", 4, 0.45, 0.013}, rows[0])
	assert.Equal(t, 2, rows[1].Nodes())
	assert.Equal(t, 4, rows[1].Replicas())
	assert.Equal(t, goodput.Observation{Nodes: 2, Replicas: 4, LocalBatch: 8, StepTime: 0.9, SyncTime: 0.2}, rows[1].Observation())

	// gpt_pmp's column order, read by header name.
	gpt := "local_bsz,step_time,sync_time,placement\n1,0.099,0.3275,88\n"
	rows, err = ReadPlacements(strings.NewReader(gpt), "gpt.csv")
	require.NoError(t, err)
	assert.Equal(t, []PlacementRow{{"88", 1, 0.099, 0.3275}}, rows)

	// Header only: no rows, no error.
	rows, err = ReadPlacements(strings.NewReader("placement,local_bsz,step_time,sync_time\n"), "h.csv")
	require.NoError(t, err)
	assert.Empty(t, rows)
}

func TestReadersReject(t *testing.T) {
	const ph = "placement,local_bsz,step_time,sync_time\n"
	const sh = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
	const vh = "progress,iteration,metric,grad_sqr,grad_var\n"
	const seedh = "gpu_type,local_bsz,placement,step_time,sync_time\n"
	read := map[string]func(string) error{
		"placements": func(s string) error { _, err := ReadPlacements(strings.NewReader(s), "f.csv"); return err },
		"scalability": func(s string) error {
			_, err := ReadScalability(strings.NewReader(s), "f.csv")
			return err
		},
		"validation": func(s string) error { _, err := ReadValidation(strings.NewReader(s), "f.csv"); return err },
		"seed":       func(s string) error { _, err := ReadSeed(strings.NewReader(s), "f.csv"); return err },
	}
	tests := []struct {
		reader, name, in string
		line             int
		column           string
	}{
		{"placements", "empty file", "", 0, ""},
		{"placements", "missing column", "placement,local_bsz,step_time\n1,4,0.4\n", 1, "sync_time"},
		{"placements", "duplicate column", "placement,placement,local_bsz,step_time,sync_time\n", 1, "placement"},
		{"placements", "non-digit placement", ph + "1,4,0.4,0.01\n1a,4,0.4,0.01\n", 3, "placement"},
		{"placements", "zero digit", ph + "10,4,0.4,0.01\n", 2, "placement"},
		{"placements", "empty placement", ph + ",4,0.4,0.01\n", 2, "placement"},
		{"placements", "zero batch", ph + "1,0,0.4,0.01\n", 2, "local_bsz"},
		{"placements", "fractional batch", ph + "1,4.5,0.4,0.01\n", 2, "local_bsz"},
		{"placements", "negative time", ph + "1,4,-0.4,0.01\n", 2, "step_time"},
		{"placements", "zero step", ph + "1,4,0,0\n", 2, "step_time"},
		{"placements", "NaN sync", ph + "1,4,0.4,NaN\n", 2, "sync_time"},
		{"placements", "Inf step", ph + "1,4,Inf,0.1\n", 2, "step_time"},
		{"placements", "text time", ph + "1,4,fast,0.1\n", 2, "step_time"},
		{"placements", "short row", ph + "1,4,0.4,0.01\n1,4,0.4\n", 3, ""},
		{"scalability", "replicas below nodes", sh + "2,1,4,0.4,0.01\n", 2, "num_replicas"},
		{"scalability", "zero nodes", sh + "0,1,4,0.4,0.01\n", 2, "num_nodes"},
		{"scalability", "missing column", "num_nodes,local_bsz,step_time,sync_time\n", 1, "num_replicas"},
		{"validation", "negative grad", vh + "10,10,0.5,-1,2\n", 2, "grad_sqr"},
		{"validation", "NaN metric", vh + "10,10,NaN,1,2\n", 2, "metric"},
		{"validation", "negative iteration", vh + "10,-3,0.5,1,2\n", 2, "iteration"},
		{"seed", "empty type", seedh + ",4,1,0.4,0.01\n", 2, "gpu_type"},
		{"seed", "bad placement", seedh + "rtx,4,x,0.4,0.01\n", 2, "placement"},
	}
	for _, tc := range tests {
		t.Run(tc.reader+"/"+tc.name, func(t *testing.T) {
			err := read[tc.reader](tc.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMalformed)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, "f.csv", pe.File)
			assert.Equal(t, tc.line, pe.Line, "%v", err)
			assert.Equal(t, tc.column, pe.Column, "%v", err)
			assert.True(t, strings.HasPrefix(err.Error(), "f.csv"), "%v", err)
		})
	}
}

func TestReadValidationAndSeed(t *testing.T) {
	v, err := ReadValidation(strings.NewReader("grad_var,grad_sqr,metric,iteration,progress\n6.8e15,1.9e14,86.7,7387,7387.0\n"), "v.csv")
	require.NoError(t, err)
	assert.Equal(t, []ValidationRow{{Progress: 7387, Iteration: 7387, Metric: 86.7, GradSqr: 1.9e14, GradVar: 6.8e15}}, v)
	assert.Equal(t, goodput.GradStats{Sqr: 1.9e14, Var: 6.8e15}, v[0].Grad())

	s, err := ReadSeed(strings.NewReader("gpu_type,local_bsz,placement,step_time,sync_time\ndgx,4,1,0.148,0.003\n"), "s.csv")
	require.NoError(t, err)
	assert.Equal(t, []SeedRow{{GPUType: "dgx", PlacementRow: PlacementRow{"1", 4, 0.148, 0.003}}}, s)
}

func TestLimitsFromPlacements(t *testing.T) {
	l, err := LimitsFromPlacements([]PlacementRow{{"1", 16, 1, 0}, {"2", 4, 1, 0}, {"11", 48, 1, 0}})
	require.NoError(t, err)
	assert.Equal(t, goodput.Limits{MinLocalBatch: 4, MaxLocalBatch: 48}, l)
	_, err = LimitsFromPlacements(nil)
	assert.ErrorIs(t, err, ErrMalformed)
}

func TestReadModelFS(t *testing.T) {
	fsys := fstest.MapFS{
		"m/placements-b.csv":  {Data: []byte("placement,local_bsz,step_time,sync_time\n1,4,0.4,0.01\n2,8,0.5,0.1\n")},
		"m/placements-a.csv":  {Data: []byte("local_bsz,step_time,sync_time,placement\n2,0.3,0.01,1\n")},
		"m/scalability-b.csv": {Data: []byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,8,4,0.9,0.4\n")},
		"m/placements.csv":    {Data: []byte("not even csv\"")},
		"m/validation-64.csv": {Data: []byte("progress,iteration,metric,grad_sqr,grad_var\n1,1,0.1,1,2\n")},
		"m/validation-8.csv":  {Data: []byte("progress,iteration,metric,grad_sqr,grad_var\n1,1,0.1,3,4\n")},
		"m/README":            {Data: []byte("ignored")},
	}
	m, err := ReadModelFS(fsys, "m")
	require.NoError(t, err)
	assert.Equal(t, "m", m.Name)
	assert.Equal(t, []string{"a", "b"}, m.TypeNames())
	b, ok := m.Type("b")
	require.True(t, ok)
	assert.Len(t, b.Placements, 2)
	assert.Len(t, b.Scalability, 1)
	obs := b.Observations()
	require.Len(t, obs, 3)
	assert.Equal(t, goodput.Observation{Nodes: 2, Replicas: 8, LocalBatch: 4, StepTime: 0.9, SyncTime: 0.4}, obs[2])
	l, err := b.Limits()
	require.NoError(t, err)
	assert.Equal(t, goodput.Limits{MinLocalBatch: 4, MaxLocalBatch: 8}, l)
	_, ok = m.Type("c")
	assert.False(t, ok)
	m0, mmax, ok := m.BatchRange()
	require.True(t, ok)
	assert.Equal(t, [2]int{8, 64}, [2]int{m0, mmax})

	// Errors name the file and line.
	bad := fstest.MapFS{"m/placements-x.csv": {Data: []byte("placement,local_bsz,step_time,sync_time\n1,4,0.4,0.01\n1,4,-1,0.01\n")}}
	_, err = ReadModelFS(bad, "m")
	require.ErrorIs(t, err, ErrMalformed)
	assert.Contains(t, err.Error(), "m/placements-x.csv:3")
	orphan := fstest.MapFS{"m/scalability-x.csv": {Data: []byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n")}}
	_, err = ReadModelFS(orphan, "m")
	require.ErrorIs(t, err, ErrMalformed)
	assert.Contains(t, err.Error(), "scalability-x.csv")
	badName := fstest.MapFS{"m/validation-big.csv": {Data: []byte("progress,iteration,metric,grad_sqr,grad_var\n")}}
	_, err = ReadModelFS(badName, "m")
	require.ErrorIs(t, err, ErrMalformed)
	_, err = ReadModelFS(fsys, "missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = ReadModelDir(filepath.Join(t.TempDir(), "nope"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// TestSharedProfiles reads every published profile and checks the per-type
// batch limits against the published artifact's table.
func TestSharedProfiles(t *testing.T) {
	dir := shareddata.Path(t, "profiles")
	models, err := ReadProfilesDir(dir)
	require.NoError(t, err)
	names := map[string]*ModelProfile{}
	for _, m := range models {
		names[m.Name] = m
	}
	require.Contains(t, names, "bert")
	require.Contains(t, names, "gpt_pmp")
	wantMax := map[string][6]int{ // aws azure dgx dgx-ext quad rtx
		"bert":        {12, 36, 12, 48, 24, 12},
		"cifar10":     {1024, 3072, 1024, 4096, 2048, 1024},
		"deepspeech2": {80, 240, 80, 320, 160, 80},
		"imagenet":    {200, 600, 200, 800, 400, 200},
		"yolov3":      {16, 24, 8, 32, 16, 8},
	}
	wantMin := map[string]int{"bert": 4, "cifar10": 32, "deepspeech2": 10, "imagenet": 20, "yolov3": 4}
	wantBatch := map[string][2]int{"bert": {12, 384}, "cifar10": {128, 4096}, "deepspeech2": {20, 640}, "imagenet": {200, 12800}, "yolov3": {8, 512}, "ncf": {256, 32768}}
	types := []string{"aws", "azure", "dgx", "dgx-ext", "quad", "rtx"}
	for model, maxes := range wantMax {
		m := names[model]
		require.NotNil(t, m, model)
		assert.Equal(t, types, m.TypeNames(), model)
		for i, typ := range types {
			tp, ok := m.Type(typ)
			require.True(t, ok)
			l, err := tp.Limits()
			require.NoError(t, err)
			assert.Equal(t, goodput.Limits{MinLocalBatch: wantMin[model], MaxLocalBatch: maxes[i]}, l, "%s %s", model, typ)
			assert.NotEmpty(t, tp.Scalability, "%s %s", model, typ)
		}
	}
	for model, b := range wantBatch {
		m0, mmax, ok := names[model].BatchRange()
		require.True(t, ok)
		assert.Equal(t, b, [2]int{m0, mmax}, model)
	}
	gpt := names["gpt_pmp"]
	assert.Equal(t, []string{"dgx-ext", "rtx"}, gpt.TypeNames())
	seeds, err := ReadSeedFile(shareddata.Path(t, "seed-profiles", "bert.csv"))
	require.NoError(t, err)
	assert.NotEmpty(t, seeds)
	for _, s := range seeds {
		assert.Equal(t, 1, s.Replicas())
	}
}

// TestFitSharedProfiles fits every data-parallel (model, type) profile from
// its placement and scalability rows and checks the pooled relative error of
// the predicted step time (T_sync, no accumulation) against the published
// fitting procedure's figures on the same profiles (median 7.3 %, p90 27.8 %).
func TestFitSharedProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 36 profiles")
	}
	models, err := ReadProfilesDir(shareddata.Path(t, "profiles"))
	require.NoError(t, err)
	var errs []float64
	fits := 0
	for _, m := range models {
		if m.Name == "gpt_pmp" {
			continue
		}
		for _, tp := range m.Types {
			obs := tp.Observations()
			p, err := goodput.Fit(obs, nil)
			require.NoError(t, err, "%s %s", m.Name, tp.Type)
			fits++
			for _, o := range obs {
				pred := p.SyncTime(o.Nodes, o.Replicas, float64(o.LocalBatch))
				errs = append(errs, math.Abs(pred-o.StepTime)/o.StepTime)
			}
		}
	}
	assert.Equal(t, 36, fits)
	sort.Float64s(errs)
	med := errs[len(errs)/2]
	p90 := errs[int(0.9*float64(len(errs)))]
	t.Logf("%d fits, %d observations: median %.2f%%, p90 %.2f%%", fits, len(errs), 100*med, 100*p90)
	assert.LessOrEqual(t, med, 0.073)
	assert.LessOrEqual(t, p90, 0.278)
}

func fuzzReader[T any](f *testing.F, read func(string) ([]T, error), seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := read(in)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.csv"), "%v", err)
			return
		}
		_ = rows
	})
}

func FuzzReadPlacements(f *testing.F) {
	fuzzReader(f, func(s string) ([]PlacementRow, error) {
		rows, err := ReadPlacements(strings.NewReader(s), "fuzz.csv")
		for _, r := range rows {
			if r.LocalBatch < 1 || r.Nodes() < 1 || r.Replicas() < r.Nodes() || !(r.StepTime > 0) || !(r.SyncTime >= 0) ||
				math.IsInf(r.StepTime, 0) || math.IsInf(r.SyncTime, 0) {
				panic("invalid row accepted")
			}
		}
		return rows, err
	}, "placement,local_bsz,step_time,sync_time\n1,4,0.45,0.013\n13,8.0,0.9,0.2\n",
		"local_bsz,step_time,sync_time,placement\n1,0.099,0.3275,88\n", "placement\n\"")
}

func FuzzReadScalability(f *testing.F) {
	fuzzReader(f, func(s string) ([]ScalabilityRow, error) {
		rows, err := ReadScalability(strings.NewReader(s), "fuzz.csv")
		for _, r := range rows {
			if r.LocalBatch < 1 || r.Nodes < 1 || r.Replicas < r.Nodes || !(r.StepTime > 0) || !(r.SyncTime >= 0) {
				panic("invalid row accepted")
			}
		}
		return rows, err
	}, "num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,6,4,1.49,1.09\n",
		"local_bsz,step_time,sync_time,num_nodes,num_replicas\n20.0,0.125,0.004,2,2\n")
}

func FuzzReadValidation(f *testing.F) {
	fuzzReader(f, func(s string) ([]ValidationRow, error) {
		rows, err := ReadValidation(strings.NewReader(s), "fuzz.csv")
		for _, r := range rows {
			if r.Iteration < 0 || !(r.GradSqr >= 0) || !(r.GradVar >= 0) || !(r.Progress >= 0) || math.IsNaN(r.Metric) {
				panic("invalid row accepted")
			}
		}
		return rows, err
	}, "progress,iteration,metric,grad_sqr,grad_var\n7387.0,7387,86.7,1.9e14,6.8e15\n")
}

func FuzzReadSeed(f *testing.F) {
	fuzzReader(f, func(s string) ([]SeedRow, error) {
		rows, err := ReadSeed(strings.NewReader(s), "fuzz.csv")
		for _, r := range rows {
			if r.GPUType == "" || r.LocalBatch < 1 || r.Replicas() < 1 {
				panic("invalid row accepted")
			}
		}
		return rows, err
	}, "gpu_type,local_bsz,placement,step_time,sync_time\ndgx,4,1,0.148,0.003\n")
}

// BenchmarkFitProfile fits one full published profile (bert on aws: 720
// placement and scalability rows).
func BenchmarkFitProfile(b *testing.B) {
	m, err := ReadModelDir(shareddata.Path(b, "profiles", "bert"))
	require.NoError(b, err)
	tp, ok := m.Type("aws")
	require.True(b, ok)
	obs := tp.Observations()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := goodput.Fit(obs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadModelDir reads one model folder (six GPU types, validation files).
func BenchmarkReadModelDir(b *testing.B) {
	dir := shareddata.Path(b, "profiles", "cifar10")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadModelDir(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCatalogueProfileReaders is the catalogue of bad profile files: binary
// garbage, broken CSV, missing and duplicate columns, and every kind of bad
// value in every column of the four formats. Each gives a *ParseError
// wrapping ErrMalformed whose one-line message starts with file:line and
// names the column.
func TestCatalogueProfileReaders(t *testing.T) {
	const ph = "placement,local_bsz,step_time,sync_time\n"
	const sh = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
	const vh = "progress,iteration,metric,grad_sqr,grad_var\n"
	const seedh = "gpu_type,local_bsz,placement,step_time,sync_time\n"
	read := map[string]func(string) error{
		"placements":  func(s string) error { _, err := ReadPlacements(strings.NewReader(s), "p.csv"); return err },
		"scalability": func(s string) error { _, err := ReadScalability(strings.NewReader(s), "p.csv"); return err },
		"validation":  func(s string) error { _, err := ReadValidation(strings.NewReader(s), "p.csv"); return err },
		"seed":        func(s string) error { _, err := ReadSeed(strings.NewReader(s), "p.csv"); return err },
	}
	type tc struct {
		reader, name, in string
		line             int
		column           string
	}
	var cases []tc
	// Garbage and broken CSV, for every reader.
	for r := range read {
		cases = append(cases,
			tc{r, "binary garbage", "\x00\x01\x02\xff\xfe\x89PNG\r\n\x1a\n\x00\x00", 1, "*"},
			tc{r, "invalid UTF-8 header", "\xc3\x28,\xa0\xa1\n1,2\n", 1, "*"},
			tc{r, "quoted newline in header", "\"a\nb\",c\n1,2\n", 1, "*"},
			tc{r, "bare quote", "a\"b,c\n", 1, ""},
			tc{r, "unterminated quote", "\"abc,d\n", 1, ""},
			tc{r, "only newlines", "\n\n\n", 0, ""},
			tc{r, "header only spaces", "   \n", 1, "*"},
		)
	}
	bad := func(r, h, name, row string, col string) tc { return tc{r, name, h + row + "\n", 2, col} }
	for _, c := range []struct{ col, v string }{
		{"local_bsz", "-4"}, {"local_bsz", "0"}, {"local_bsz", "-0"}, {"local_bsz", "4.5"}, {"local_bsz", "NaN"}, {"local_bsz", "Inf"},
		{"local_bsz", "9223372036854775807"}, {"local_bsz", "99999999999999999999999"}, {"local_bsz", "1e300"}, {"local_bsz", "1099511627777"},
		{"local_bsz", ""}, {"local_bsz", "four"}, {"local_bsz", "0x10"},
		{"step_time", "-0.4"}, {"step_time", "0"}, {"step_time", "NaN"}, {"step_time", "+Inf"}, {"step_time", "-Inf"}, {"step_time", "infinity"},
		{"step_time", "1e999"}, {"step_time", ""}, {"step_time", "0.4s"},
		{"sync_time", "-1e-300"}, {"sync_time", "nan"}, {"sync_time", "Inf"}, {"sync_time", ""},
		{"placement", "0"}, {"placement", "10"}, {"placement", "-1"}, {"placement", "1.5"}, {"placement", "a"}, {"placement", ""},
		{"placement", strings.Repeat("1", 65)}, {"placement", "１"},
	} {
		vals := map[string]string{"placement": "12", "local_bsz": "4", "step_time": "0.4", "sync_time": "0.01"}
		vals[c.col] = c.v
		q := func(s string) string { return "\"" + s + "\"" }
		row := q(vals["placement"]) + "," + q(vals["local_bsz"]) + "," + q(vals["step_time"]) + "," + q(vals["sync_time"])
		cases = append(cases, bad("placements", ph, c.col+"="+c.v, row, c.col))
		cases = append(cases, bad("seed", seedh, c.col+"="+c.v, q("rtx")+","+q(vals["local_bsz"])+","+q(vals["placement"])+","+q(vals["step_time"])+","+q(vals["sync_time"]), c.col))
	}
	for _, c := range []struct{ col, v string }{
		{"num_nodes", "0"}, {"num_nodes", "-2"}, {"num_nodes", "2.5"}, {"num_nodes", "9223372036854775808"}, {"num_nodes", "x"},
		{"num_replicas", "0"}, {"num_replicas", "1"}, {"num_replicas", "8.25"}, {"num_replicas", "1e40"},
		{"local_bsz", "0"}, {"step_time", "-1"}, {"sync_time", "NaN"},
	} {
		vals := map[string]string{"num_nodes": "2", "num_replicas": "8", "local_bsz": "4", "step_time": "0.9", "sync_time": "0.4"}
		vals[c.col] = c.v
		row := strings.Join([]string{vals["num_nodes"], vals["num_replicas"], vals["local_bsz"], vals["step_time"], vals["sync_time"]}, ",")
		cases = append(cases, bad("scalability", sh, c.col+"="+c.v, row, c.col))
	}
	for _, c := range []struct{ col, v string }{
		{"progress", "-1"}, {"progress", "NaN"}, {"progress", "Inf"}, {"iteration", "-1"}, {"iteration", "1.5"}, {"iteration", "1e30"},
		{"metric", "NaN"}, {"metric", "-Inf"}, {"metric", "high"}, {"grad_sqr", "-1"}, {"grad_sqr", "Inf"}, {"grad_var", "-0.1"}, {"grad_var", "NaN"},
	} {
		vals := map[string]string{"progress": "10", "iteration": "10", "metric": "0.5", "grad_sqr": "1", "grad_var": "2"}
		vals[c.col] = c.v
		row := strings.Join([]string{vals["progress"], vals["iteration"], vals["metric"], vals["grad_sqr"], vals["grad_var"]}, ",")
		cases = append(cases, bad("validation", vh, c.col+"="+c.v, row, c.col))
	}
	cases = append(cases,
		tc{"seed", "blank gpu_type", seedh + "  ,4,1,0.4,0.01\n", 2, "gpu_type"},
		tc{"placements", "error after blank lines", ph + "1,4,0.4,0.01\n\n\n1,4,0.4,x\n", 5, "sync_time"},
		tc{"placements", "error after a quoted multi-line field", "placement,local_bsz,step_time,sync_time,note\n1,4,0.4,0.01,\"a\nb\"\n1,4,-1,0.01,c\n", 4, "step_time"},
		tc{"placements", "too many fields", ph + "1,4,0.4,0.01,9\n", 2, ""},
		tc{"placements", "duplicate column after BOM", "\ufeffplacement,placement,local_bsz,step_time,sync_time\n", 1, "placement"},
	)
	for _, c := range cases {
		t.Run(c.reader+"/"+c.name, func(t *testing.T) {
			err := read[c.reader](c.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMalformed)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, "p.csv", pe.File)
			assert.Equal(t, c.line, pe.Line, "%v", err)
			if c.column != "*" { // "*": any missing column
				assert.Equal(t, c.column, pe.Column, "%v", err)
			} else {
				assert.NotEmpty(t, pe.Column)
			}
			msg := err.Error()
			assert.NotContains(t, msg, "\n", "one line")
			if c.line > 0 {
				assert.True(t, strings.HasPrefix(msg, "p.csv:"+strconv.Itoa(c.line)+": "), "%v", msg)
			}
			if c.column != "" && c.column != "*" {
				assert.Contains(t, msg, `column "`+c.column+`"`)
			}
		})
	}
	t.Logf("%d bad profile files", len(cases))
	// Valid edge cases: header only (no rows), a BOM, extra columns, spaces,
	// the largest accepted count, integral decimals.
	rows, err := ReadPlacements(strings.NewReader("\ufeff placement , local_bsz,step_time,sync_time,extra\n 1 ,1099511627776,1e-300,0,x\n"), "p.csv")
	require.NoError(t, err)
	assert.Equal(t, []PlacementRow{{"1", MaxCount, 1e-300, 0}}, rows)
	srows, err := ReadScalability(strings.NewReader(sh+"2.0,8.0,4.0,0.9,0.4\n"), "p.csv")
	require.NoError(t, err)
	assert.Equal(t, []ScalabilityRow{{2, 8, 4, 0.9, 0.4}}, srows)
}

// TestCatalogueModelFolders: bad model folders give errors naming the file.
func TestCatalogueModelFolders(t *testing.T) {
	const ph = "placement,local_bsz,step_time,sync_time\n1,4,0.4,0.01\n"
	const vh = "progress,iteration,metric,grad_sqr,grad_var\n1,1,0.1,1,2\n"
	cases := []struct {
		name string
		fsys fstest.MapFS
		file string
	}{
		{"validation batch zero", fstest.MapFS{"m/validation-0.csv": {Data: []byte(vh)}}, "m/validation-0.csv"},
		{"validation batch negative", fstest.MapFS{"m/validation--8.csv": {Data: []byte(vh)}}, "m/validation--8.csv"},
		{"validation batch huge", fstest.MapFS{"m/validation-99999999999999999999.csv": {Data: []byte(vh)}}, "m/validation-99999999999999999999.csv"},
		{"validation batch above MaxCount", fstest.MapFS{"m/validation-1099511627777.csv": {Data: []byte(vh)}}, "m/validation-1099511627777.csv"},
		{"validation batch empty", fstest.MapFS{"m/validation-.csv": {Data: []byte(vh)}}, "m/validation-.csv"},
		// Two files for one batch size: the curves would be ambiguous.
		{"duplicate validation batch", fstest.MapFS{"m/validation-64.csv": {Data: []byte(vh)}, "m/validation-064.csv": {Data: []byte(vh)}}, "also given by m/validation-064.csv"},
		{"bad validation row", fstest.MapFS{"m/validation-8.csv": {Data: []byte(vh + "1,1,NaN,1,2\n")}}, "m/validation-8.csv:3"},
		{"scalability without placements", fstest.MapFS{"m/placements-a.csv": {Data: []byte(ph)}, "m/scalability-b.csv": {Data: []byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n")}}, "m/scalability-b.csv"},
		{"bad scalability row", fstest.MapFS{"m/placements-a.csv": {Data: []byte(ph)}, "m/scalability-a.csv": {Data: []byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n3,2,4,1,0.1\n")}}, "m/scalability-a.csv:2"},
		{"binary placements", fstest.MapFS{"m/placements-a.csv": {Data: []byte("\x00\xff\x10garbage\x00")}}, "m/placements-a.csv:1"},
		// File (and so type) names with newlines or control bytes are quoted:
		// the message stays on one line (found by FuzzReadModelFS).
		{"newline in a file name", fstest.MapFS{"m/placements-\n.csv": {Data: []byte("0")}}, `"m/placements-\n.csv":1`},
		{"control byte in an orphan's type", fstest.MapFS{"m/scalability-\x01.csv": {Data: []byte("x")}}, `no "placements-\x01.csv" beside it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k := 0; k < 3; k++ {
				_, err := ReadModelFS(c.fsys, "m")
				require.ErrorIs(t, err, ErrMalformed)
				var pe *ParseError
				require.True(t, errors.As(err, &pe))
				assert.Contains(t, err.Error(), c.file)
				assert.NotContains(t, err.Error(), "\n")
			}
		})
	}
	// Missing files and folders: fs.ErrNotExist, naming the path.
	missing := filepath.Join(t.TempDir(), "absent")
	_, err := ReadProfilesDir(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = ReadSeedFile(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), missing)
	// Valid edge cases: an empty folder has no types and no batch range; a
	// placements file with only a header gives a type with no rows, whose
	// Limits is an error naming the type.
	m, err := ReadModelFS(fstest.MapFS{"m/README": {Data: []byte("x")}}, "m")
	require.NoError(t, err)
	assert.Empty(t, m.Types)
	_, _, ok := m.BatchRange()
	assert.False(t, ok)
	m, err = ReadModelFS(fstest.MapFS{"m/placements-a.csv": {Data: []byte("placement,local_bsz,step_time,sync_time\n")}}, "m")
	require.NoError(t, err)
	tp, ok := m.Type("a")
	require.True(t, ok)
	_, err = tp.Limits()
	assert.ErrorIs(t, err, ErrMalformed)
	assert.Contains(t, err.Error(), "type a")
}

// FuzzReadModelFS builds a model folder from arbitrary file names and
// contents (placements, scalability and validation files of fuzzed types and
// batch sizes) and checks that ReadModelFS never panics, fails with a
// one-line error naming a file of the folder, or returns sorted types and
// validation curves with valid rows, the same way twice.
func FuzzReadModelFS(f *testing.F) {
	f.Add("a", "placement,local_bsz,step_time,sync_time\n1,4,0.4,0.01\n", "a", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,8,4,0.9,0.4\n", "64", "progress,iteration,metric,grad_sqr,grad_var\n1,1,0.1,1,2\n")
	f.Add("b", "placement,local_bsz,step_time,sync_time\n", "c", "x", "064", "\x00")
	f.Fuzz(func(t *testing.T, ptype, pdata, stype, sdata, bsz, vdata string) {
		fsys := fstest.MapFS{}
		for _, e := range []struct{ name, data string }{
			{"m/placements-" + ptype + ".csv", pdata},
			{"m/scalability-" + stype + ".csv", sdata},
			{"m/validation-" + bsz + ".csv", vdata},
			{"m/validation-8.csv", "progress,iteration,metric,grad_sqr,grad_var\n1,1,0.1,1,2\n"},
		} {
			if !fs.ValidPath(e.name) || strings.Count(e.name, "/") != 1 {
				return
			}
			fsys[e.name] = &fstest.MapFile{Data: []byte(e.data)}
		}
		m, err := ReadModelFS(fsys, "m")
		m2, err2 := ReadModelFS(fsys, "m")
		if err != nil {
			require.Error(t, err2)
			require.Equal(t, err.Error(), err2.Error())
			require.Contains(t, err.Error(), "m/")
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.NoError(t, err2)
		require.Equal(t, m, m2)
		require.True(t, sort.SliceIsSorted(m.Types, func(i, j int) bool { return m.Types[i].Type < m.Types[j].Type }))
		for i := 1; i < len(m.Validation); i++ {
			require.Less(t, m.Validation[i-1].Batch, m.Validation[i].Batch)
		}
		for _, tp := range m.Types {
			for _, o := range tp.Observations() {
				require.GreaterOrEqual(t, o.LocalBatch, 1)
				require.LessOrEqual(t, o.LocalBatch, MaxCount)
				require.GreaterOrEqual(t, o.Replicas, o.Nodes)
				require.Greater(t, o.StepTime, 0.0)
			}
		}
	})
}

func TestReadOptionsSyncBelowStep(t *testing.T) {
	in := "placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n2,4,0.5,0.5\n"
	rows, err := ReadPlacements(strings.NewReader(in), "p.csv")
	require.NoError(t, err, "off by default (gpt_pmp's files)")
	require.Len(t, rows, 2)
	_, err = ReadPlacementsWith(strings.NewReader(in), "p.csv", &ReadOptions{SyncBelowStep: true})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, ParseError{File: "p.csv", Line: 3, Column: "sync_time", Reason: "0.5 is not below step_time 0.5"}, *pe)

	sc := "num_nodes,num_replicas,local_bsz,step_time,sync_time\n1,2,4,0.5,0.6\n"
	_, err = ReadScalability(strings.NewReader(sc), "s.csv")
	require.NoError(t, err)
	_, err = ReadScalabilityWith(strings.NewReader(sc), "s.csv", &ReadOptions{SyncBelowStep: true})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Line)
	assert.Equal(t, "sync_time", pe.Column)
}

func TestReadModelFSWithTypes(t *testing.T) {
	fsys := fstest.MapFS{
		"m/placements-a.csv":  {Data: []byte("placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n")},
		"m/placements-b.csv":  {Data: []byte("placement,local_bsz,step_time,sync_time\n1,4,0,0\n")},
		"m/scalability-b.csv": {Data: []byte("garbage")},
		"m/validation-8.csv":  {Data: []byte("progress,iteration,metric,grad_sqr,grad_var\n1,1,0,1,1\n")},
	}
	_, err := ReadModelFS(fsys, "m")
	require.ErrorIs(t, err, ErrMalformed)
	m, err := ReadModelFSWith(fsys, "m", &ReadOptions{Types: []string{"a"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, m.TypeNames())
	_, err = ReadModelFSWith(fsys, "m", &ReadOptions{Types: []string{"a", "b"}})
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "m/placements-b.csv", pe.File)
}

// TestReadModelDirUnopenableFileNamesIt: a file that is listed but cannot be
// opened (here a dangling symbolic link) fails the read with the file's
// path as the caller gave it, and the cause for errors.Is.
func TestReadModelDirUnopenableFileNamesIt(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "placements-a.csv"), []byte("placement,local_bsz,step_time,sync_time\n1,4,0.5,0.1\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "scalability-a.csv")))
	_, err := ReadModelDir(dir)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), filepath.Join(dir, "scalability-a.csv"))
}
