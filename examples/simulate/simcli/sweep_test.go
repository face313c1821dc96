package simcli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

func TestConvertKinds(t *testing.T) {
	wl := &sim.Workload{Name: "w"}
	for i := range 40 {
		wl.Jobs = append(wl.Jobs, sim.JobSpec{Name: fmt.Sprintf("job-%d", i), App: "bert", Replicas: 1, Batch: 12})
	}
	prev := map[string]bool{}
	for _, share := range []float64{0, 0.1, 0.25, 0.5, 0.75, 1} {
		got, err := ConvertKinds(wl, sim.CategoryRigid, share, 7)
		require.NoError(t, err)
		require.NoError(t, got.Validate())
		conv := map[string]bool{}
		for i, j := range got.Jobs {
			assert.Equal(t, wl.Jobs[i].Name, j.Name, "order kept")
			if j.Category == sim.CategoryRigid {
				conv[j.Name] = true
			} else {
				assert.Equal(t, sim.CategoryAdaptive, j.Category)
			}
		}
		assert.Len(t, conv, int(share*40+0.5), "share %v", share)
		for name := range prev {
			assert.True(t, conv[name], "share %v keeps %s converted (nested shares)", share, name)
		}
		prev = conv
	}
	assert.Empty(t, wl.Jobs[0].Category, "the input is not modified")
	a, _ := ConvertKinds(wl, sim.CategoryStrongScaled, 0.5, 1)
	b, _ := ConvertKinds(wl, sim.CategoryStrongScaled, 0.5, 2)
	assert.NotEqual(t, a.Jobs, b.Jobs, "the seed picks other jobs")
	_, err := ConvertKinds(wl, "elastic", 0.5, 1)
	assert.ErrorContains(t, err, `"elastic"`)
	_, err = ConvertKinds(wl, sim.CategoryRigid, 1.5, 1)
	assert.ErrorContains(t, err, "want 0..1")
}

func TestSweepWritesTablesCSVAndFigures(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	wl := writeWorkload(t, small)
	err := Default.Sweep(context.Background(), []string{"-traces", "tiny=" + wl, "-plot", dir}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "Figure 10")
	assert.Contains(t, out.String(), "Figure 11")
	for _, f := range []string{"fig10.png", "fig10.svg", "fig11.png", "fig11.svg", "fig10.csv", "fig11.csv"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
	f, err := os.Open(filepath.Join(dir, "fig11.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+2*len(SweepShares))
	assert.Equal(t, "normalised_avg_jct", rows[0][11])
	assert.Equal(t, "1", rows[1][11], "share 0 is the normaliser")
	for _, r := range rows[1:] {
		assert.NotEmpty(t, r[10], "worst ρ of %s=%s", r[1], r[2])
	}

	f10, err := os.ReadFile(filepath.Join(dir, "fig10.csv"))
	require.NoError(t, err)
	rows, err = csv.NewReader(bytes.NewReader(f10)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(SweepPs)+len(SweepRounds))
	for _, r := range rows[1:] {
		assert.NotEmpty(t, r[9], "unfair fraction of %s=%s", r[1], r[2])
	}
}

func TestSweepBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-traces"},
		{[]string{"-traces", "x"}, "NAME=PATH"},
		{[]string{"-traces", "a=b", "-figures", "9"}, "want 10 and/or 11"},
		{[]string{"-traces", "a=b", "-variant", "x"}, "-variant"},
		{[]string{"-traces", "a=b", "-policy", "nope"}, "unknown policy"},
		{[]string{"-traces", "a=/nonexistent/w.csv"}, "-traces a"},
	} {
		var out, errb bytes.Buffer
		err := Default.Sweep(context.Background(), tc.args, &out, &errb)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}
