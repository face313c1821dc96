package sim

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileConfig: round lengths and time limits a user could pass are
// errors naming the field before any round runs.
func TestHostileConfig(t *testing.T) {
	truth, err := LoadModel()
	require.NoError(t, err)
	cl, err := ParseCluster("t4:2x4", 1)
	require.NoError(t, err)
	wl := &Workload{Name: "w", Jobs: []JobSpec{{Name: "a", App: "cifar10", Replicas: 1, Batch: 128}}}
	for name, c := range map[string]struct {
		cfg   Config
		field string
	}{
		"round NaN":              {Config{Round: math.NaN()}, "Round"},
		"round +Inf":             {Config{Round: math.Inf(1)}, "Round"},
		"round negative":         {Config{Round: -60}, "Round"},
		"round 1ns":              {Config{Round: 1e-9}, "Round"},
		"round above a day":      {Config{Round: MaxRound + 1}, "Round"},
		"max time NaN":           {Config{MaxTime: math.NaN()}, "MaxTime"},
		"max time -Inf":          {Config{MaxTime: math.Inf(-1)}, "MaxTime"},
		"max time +Inf":          {Config{MaxTime: math.Inf(1)}, "MaxTime"},
		"max time negative":      {Config{MaxTime: -1}, "MaxTime"},
		"too many rounds":        {Config{Round: 1, MaxTime: MaxSubmit}, "MaxTime"},
		"max time before submit": {Config{MaxTime: 1}, "time"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Cluster, cfg.Truth = cl, truth
			w := *wl
			if name == "max time before submit" {
				w.Jobs = []JobSpec{{Name: "a", App: "cifar10", Replicas: 1, Batch: 128, Submit: 5}}
			}
			_, err := Run(context.Background(), cfg, &w, Fixed{GPUs: 1})
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, c.field, ie.Field, err.Error())
		})
	}
}

// TestHostileWorkloadSpecs: a Workload built in code is validated like a
// read one.
func TestHostileWorkloadSpecs(t *testing.T) {
	for name, j := range map[string]JobSpec{
		"submit NaN":      {Name: "a", App: "cifar10", Replicas: 1, Batch: 1, Submit: math.NaN()},
		"submit -0.5":     {Name: "a", App: "cifar10", Replicas: 1, Batch: 1, Submit: -0.5},
		"submit +Inf":     {Name: "a", App: "cifar10", Replicas: 1, Batch: 1, Submit: math.Inf(1)},
		"submit 1e308":    {Name: "a", App: "cifar10", Replicas: 1, Batch: 1, Submit: 1e308},
		"replicas 0":      {Name: "a", App: "cifar10", Replicas: 0, Batch: 1},
		"replicas MaxInt": {Name: "a", App: "cifar10", Replicas: math.MaxInt, Batch: 1},
		"batch MinInt":    {Name: "a", App: "cifar10", Replicas: 1, Batch: math.MinInt},
		"empty name":      {App: "cifar10", Replicas: 1, Batch: 1},
		"empty app":       {Name: "a", Replicas: 1, Batch: 1},
		"bad category":    {Name: "a", App: "cifar10", Replicas: 1, Batch: 1, Category: "Rigid"},
	} {
		t.Run(name, func(t *testing.T) {
			wl := &Workload{Name: "w", Jobs: []JobSpec{j}}
			require.ErrorIs(t, wl.Validate(), ErrInvalidInput)
		})
	}
	wl := &Workload{Name: "w", Jobs: []JobSpec{{Name: "a", App: "cifar10", Replicas: 1, Batch: 1}, {Name: "a", App: "bert", Replicas: 1, Batch: 1, Submit: 3}}}
	require.ErrorIs(t, wl.Validate(), ErrInvalidInput, "duplicate names")
}

// TestHostileReadWorkload: files a user could write by hand.
func TestHostileReadWorkload(t *testing.T) {
	const h = "name,time,application,num_replicas,batch_size\n"
	bad := map[string]struct {
		body   string
		line   int
		column string
	}{
		"time with unit":       {h + "a,5s,cifar10,1,8\n", 2, "time"},
		"time hex":             {h + "a,0x10,cifar10,1,8\n", 2, "time"},
		"time above ten years": {h + "a,315360001,cifar10,1,8\n", 2, "time"},
		"time -1e-300":         {h + "a,-1e-300,cifar10,1,8\n", 2, "time"},
		"replicas fraction":    {h + "a,0,cifar10,1.5,8\n", 2, "num_replicas"},
		"replicas negative":    {h + "a,0,cifar10,-1,8\n", 2, "num_replicas"},
		"replicas NaN":         {h + "a,0,cifar10,NaN,8\n", 2, "num_replicas"},
		"replicas +Inf":        {h + "a,0,cifar10,+Inf,8\n", 2, "num_replicas"},
		"batch zero":           {h + "a,0,cifar10,1,0\n", 2, "batch_size"},
		"batch 1e10":           {h + "a,0,cifar10,1,1e10\n", 2, "batch_size"},
		"name blank":           {h + " ,0,cifar10,1,8\n", 2, "name"},
		"duplicate later":      {h + "a,0,cifar10,1,8\nb,1,cifar10,1,8\na,2,bert,1,8\n", 4, "name"},
		"missing column":       {"name,time,application,batch_size\na,0,cifar10,8\n", 1, "num_replicas"},
		"short row":            {h + "a,0,cifar10,1\n", 2, ""},
		"category case":        {"name,time,application,num_replicas,batch_size,category\na,0,cifar10,1,8,RIGID\n", 2, "category"},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			wl, err := ReadWorkload(strings.NewReader(c.body), "w.csv")
			require.Error(t, err, "accepted: %+v", wl)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "w.csv", ie.File)
			assert.Equal(t, c.line, ie.Line, err.Error())
			assert.Equal(t, c.column, ie.Field, err.Error())
		})
	}
	// Unsorted times are sorted (stable), CRLF, BOM and blank lines read.
	wl, err := ReadWorkload(strings.NewReader("\ufeff"+strings.ReplaceAll(h+"c,30,cifar10,1,8\n\nb,10,cifar10,1,8\na,30,bert,1,8\nd,-0,bert,1,8\n\n", "\n", "\r\n")), "w.csv")
	require.NoError(t, err)
	var names []string
	for _, j := range wl.Jobs {
		names = append(names, j.Name)
	}
	assert.Equal(t, []string{"d", "b", "c", "a"}, names)
	assert.Equal(t, 2, wl.Jobs[2].Line, "c keeps its file line")
}
