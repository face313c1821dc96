package sim

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadWorkloadValid(t *testing.T) {
	in := "time,name,application,batch_size,num_replicas,category\n" +
		"30,b-1,bert,384,8,rigid\n" +
		"10.5,c-0,cifar10,2048,4,\n"
	wl, err := ReadWorkload(strings.NewReader(in), "w.csv")
	require.NoError(t, err)
	require.Len(t, wl.Jobs, 2)
	// Sorted by submission time.
	assert.Equal(t, JobSpec{Name: "c-0", Submit: 10.5, App: "cifar10", Replicas: 4, Batch: 2048, Line: 3}, wl.Jobs[0])
	assert.Equal(t, CategoryRigid, wl.Jobs[1].Category)
	assert.Equal(t, "w", wl.Name)
}

func TestReadWorkloadErrors(t *testing.T) {
	const h = "name,time,application,num_replicas,batch_size\n"
	tests := []struct {
		name, in   string
		line       int
		field, job string
	}{
		{"empty", "", 1, "", ""},
		{"missing column", "name,time,application,num_replicas\nx,0,bert,1\n", 1, "batch_size", ""},
		{"duplicate column", "name,name,time,application,num_replicas,batch_size\n", 1, "name", ""},
		{"bad time", h + "x,abc,bert,1,12\n", 2, "time", "x"},
		{"negative time", h + "x,-1,bert,1,12\n", 2, "time", "x"},
		{"nan time", h + "x,NaN,bert,1,12\n", 2, "time", "x"},
		{"zero replicas", h + "x,0,bert,0,12\n", 2, "num_replicas", "x"},
		{"fractional replicas", h + "x,0,bert,1.5,12\n", 2, "num_replicas", "x"},
		{"huge replicas", h + "x,0,bert,99999999,12\n", 2, "num_replicas", "x"},
		{"negative batch", h + "x,0,bert,1,-12\n", 2, "batch_size", "x"},
		{"duplicate name", h + "x,0,bert,1,12\nx,1,bert,1,12\n", 3, "name", "x"},
		{"empty name", h + ",0,bert,1,12\n", 2, "name", ""},
		{"empty application", h + "x,0,,1,12\n", 2, "application", "x"},
		{"field count", h + "x,0,bert,1\n", 2, "", ""},
		{"bad category", "name,time,application,num_replicas,batch_size,category\nx,0,bert,1,12,elastic\n", 2, "category", "x"},
		{"bad quote", h + "\"x,0,bert,1,12\n", 2, "", ""},
		{"huge time", h + "x,1e308,bert,1,12\n", 2, "time", "x"},
		{"time past the bound", h + "x,315360001,bert,1,12\n", 2, "time", "x"},
		{"infinite time", h + "x,+Inf,bert,1,12\n", 2, "time", "x"},
		{"hex time", h + "x,0x10,bert,1,12\n", 2, "time", "x"},
		{"nan replicas", h + "x,0,bert,NaN,12\n", 2, "num_replicas", "x"},
		{"huge batch", h + "x,0,bert,1,1e12\n", 2, "batch_size", "x"},
		{"duplicate time column", "name,time,application,num_replicas,batch_size,time\nx,0,bert,1,12,5\n", 1, "time", ""},
		{"BOM then duplicate", "\ufeffname,time,application,num_replicas,batch_size,name\n", 1, "name", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadWorkload(strings.NewReader(tc.in), "w.csv")
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalidInput))
			var ie *InputError
			require.True(t, errors.As(err, &ie), err.Error())
			assert.Equal(t, "w.csv", ie.File)
			assert.Equal(t, tc.line, ie.Line, err.Error())
			assert.Equal(t, tc.field, ie.Field, err.Error())
			assert.Equal(t, tc.job, ie.Job, err.Error())
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestReadWorkloadBOMAndBounds(t *testing.T) {
	in := "\ufeffname,time,application,num_replicas,batch_size\nx,315360000,bert,65536,2147483647\n"
	wl, err := ReadWorkload(strings.NewReader(in), "w.csv")
	require.NoError(t, err)
	assert.Equal(t, JobSpec{Name: "x", Submit: MaxSubmit, App: "bert", Replicas: MaxReplicas, Batch: MaxBatch, Line: 2}, wl.Jobs[0])
}

func TestWorkloadValidate(t *testing.T) {
	good := JobSpec{Name: "a", App: "bert", Replicas: 1, Batch: 8}
	tests := []struct {
		name  string
		edit  func(*JobSpec)
		field string
	}{
		{"empty name", func(j *JobSpec) { j.Name = "" }, "Jobs[1].Name"},
		{"duplicate name", func(j *JobSpec) { j.Name = "a" }, "Jobs[1].Name"},
		{"empty app", func(j *JobSpec) { j.App = "" }, "Jobs[1].App"},
		{"NaN submit", func(j *JobSpec) { j.Submit = math.NaN() }, "Jobs[1].Submit"},
		{"negative submit", func(j *JobSpec) { j.Submit = -1 }, "Jobs[1].Submit"},
		{"huge submit", func(j *JobSpec) { j.Submit = 1e308 }, "Jobs[1].Submit"},
		{"zero replicas", func(j *JobSpec) { j.Replicas = 0 }, "Jobs[1].Replicas"},
		{"huge replicas", func(j *JobSpec) { j.Replicas = MaxReplicas + 1 }, "Jobs[1].Replicas"},
		{"zero batch", func(j *JobSpec) { j.Batch = 0 }, "Jobs[1].Batch"},
		{"bad category", func(j *JobSpec) { j.Category = "elastic" }, "Jobs[1].Category"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := good
			b.Name = "b"
			tc.edit(&b)
			err := (&Workload{Jobs: []JobSpec{good, b}}).Validate()
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.field, ie.Field)
		})
	}
	require.NoError(t, (&Workload{Jobs: []JobSpec{good}}).Validate())
	assert.ErrorIs(t, (*Workload)(nil).Validate(), ErrInvalidInput)
}

func TestLoadWorkloadsFolder(t *testing.T) {
	dir := t.TempDir()
	body := "name,time,application,num_replicas,batch_size\nx,0,bert,1,12\n"
	for _, n := range []string{"workload-10.csv", "workload-2.csv", "other.csv"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644))
	}
	wls, err := LoadWorkloads(dir)
	require.NoError(t, err)
	require.Len(t, wls, 2)
	assert.Equal(t, "workload-2", wls[0].Name)
	assert.Equal(t, "workload-10", wls[1].Name)

	_, err = LoadWorkloads(filepath.Join(dir, "missing.csv"))
	assert.True(t, errors.Is(err, ErrInvalidInput))
	_, err = LoadWorkloads(t.TempDir())
	assert.True(t, errors.Is(err, ErrInvalidInput))
}

func FuzzReadWorkload(f *testing.F) {
	f.Add("name,time,application,num_replicas,batch_size\ncifar10-0,401.0,cifar10,12,4096\n")
	f.Add("name,time,application,num_replicas,batch_size,category\nb,1,bert,4,384,rigid\n")
	f.Add("time,name\n1,2\n")
	f.Add("\x00\xff,\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		wl, err := ReadWorkload(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error does not wrap ErrInvalidInput: %v", err)
			}
			return
		}
		names := map[string]bool{}
		prev := -1.0
		for _, j := range wl.Jobs {
			if j.Name == "" || j.App == "" || j.Replicas < 1 || j.Batch < 1 || j.Submit < 0 || j.Submit < prev {
				t.Fatalf("invalid job accepted: %+v", j)
			}
			if names[j.Name] {
				t.Fatalf("duplicate name accepted: %q", j.Name)
			}
			names[j.Name] = true
			prev = j.Submit
		}
	})
}

func TestParseCluster(t *testing.T) {
	c, err := ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	assert.Equal(t, "t4:6x4,a100:2x8,rtx:3x8", c.String())
	assert.Equal(t, 64, c.TotalGPUs())
	c, err = ParseCluster("homogeneous", 2)
	require.NoError(t, err)
	assert.Equal(t, 128, c.TotalGPUs())
	c, err = ParseCluster("physical", 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"rtx", "a100", "quad"}, c.Types())
	assert.Equal(t, 44, c.TotalGPUs())
	c, err = ParseCluster(" t4 : 2X4 , v100:1x8", 3)
	require.NoError(t, err)
	assert.Equal(t, "t4:6x4,v100:3x8", c.String())
	assert.Equal(t, 24, c.Capacity("t4"))

	for _, bad := range []string{"", "t4", "t4:4", "t4:0x4", "t4:2x-1", "t4:axb", "t4:1x4,t4:1x4", ":1x4"} {
		_, err := ParseCluster(bad, 1)
		assert.True(t, errors.Is(err, ErrInvalidInput), "spec %q", bad)
	}
	_, err = ParseCluster("heterogeneous", 0)
	assert.True(t, errors.Is(err, ErrInvalidInput))
}

func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate(7, 8, 20)
	require.NoError(t, err)
	b, err := Generate(7, 8, 20)
	require.NoError(t, err)
	assert.Equal(t, a.Jobs, b.Jobs)
	// Poisson arrivals: about 160 jobs, all inside the window, names unique.
	assert.InDelta(t, 160, len(a.Jobs), 50)
	names := map[string]bool{}
	for _, j := range a.Jobs {
		assert.Less(t, j.Submit, 8*3600.0+1)
		assert.False(t, names[j.Name])
		names[j.Name] = true
	}
	c, err := Generate(8, 8, 20)
	require.NoError(t, err)
	assert.NotEqual(t, a.Jobs, c.Jobs)
	_, err = Generate(1, 0, 20)
	assert.True(t, errors.Is(err, ErrInvalidInput))
}
