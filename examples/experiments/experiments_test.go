package experiments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/examples/simulate/simcli"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
	"github.com/sia-sched/sia/sia/sim/simtest"
)

// dataDir returns the shared data folder (env SIA_DATA, else
// ../../../shared/data from this module), or skips the test.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SIA_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "profiles")); err != nil {
		t.Skipf("no profiles under %s (set SIA_DATA to the data folder): %v", dir, err)
	}
	return dir
}

// saturn1 loads the paper's heterogeneous cluster, the measured-profile
// ground truth and saturn workload-1.
func saturn1(t *testing.T) (sim.Cluster, sim.Truth, *sim.Workload, string) {
	dir := dataDir(t)
	cluster, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	truth, err := sim.LoadTrace(filepath.Join(dir, "profiles"), cluster.Types())
	require.NoError(t, err)
	file := filepath.Join(dir, "workloads", "saturn", "workload-1.csv")
	wl, err := sim.LoadWorkload(file)
	require.NoError(t, err)
	return cluster, truth, wl, dir
}

// stickySia is Sia with a stickiness bonus: a running job's current
// configuration is worth 10 % more, so that small gains do not cause a
// restart. The edit changes G; the round re-rounds, re-clips and
// recomputes dominance (sia.Scheduler.WithGoodputEdit).
func stickySia(cluster sim.Cluster, truth sim.Truth) (sim.Policy, error) {
	opts := &sia.Options{Artifact: sia.PublishedArtifact()}
	s, err := sia.New(opts)
	if err != nil {
		return nil, err
	}
	sticky := s.WithGoodputEdit(func(_ *sia.Job, _ sia.Allocation, current bool, g float64) float64 {
		if current {
			return g * 1.1
		}
		return g
	})
	return siapolicy.New(cluster, truth, siapolicy.Options{Name: "sia-sticky", Scheduler: sticky})
}

// run simulates one policy and returns its result.
func run(t *testing.T, cluster sim.Cluster, truth sim.Truth, wl *sim.Workload, opt *sim.Options, p sim.Policy) *sim.Result {
	t.Helper()
	s, err := sim.New(cluster, truth, opt)
	require.NoError(t, err)
	res, err := s.Run(context.Background(), wl, p)
	require.NoError(t, err)
	return res
}

func line(s sim.Summary) string {
	return fmt.Sprintf("%-10s jobs %d  avg JCT %.3f h  p99 %.2f h  makespan %.2f h  GPU-h/job %.2f  restarts/job %.2f",
		s.Policy, s.Jobs, s.AvgJCT/3600, s.P99JCT/3600, s.Makespan/3600, s.GPUHoursPerJob, s.RestartsPerJob)
}

// TestOwnPolicyVsSiaAndGavel is docs/experiments.md §1: an own policy (Sia
// with a stickiness bonus) against Sia and Gavel on saturn workload-1.
func TestOwnPolicyVsSiaAndGavel(t *testing.T) {
	cluster, truth, wl, _ := saturn1(t)
	siaPol, err := siapolicy.New(cluster, truth, siapolicy.Options{})
	require.NoError(t, err)
	sticky, err := stickySia(cluster, truth)
	require.NoError(t, err)
	results := map[string]*sim.Result{
		"sia":        run(t, cluster, truth, wl, nil, siaPol),
		"gavel":      run(t, cluster, truth, wl, &sim.Options{Round: 360, Rigid: true}, gavel.New(cluster, truth, 360)),
		"sia-sticky": run(t, cluster, truth, wl, nil, sticky),
	}
	got := map[string]string{}
	for name, res := range results {
		got[name] = line(sim.Summarize([]*sim.Result{res}))
		t.Log(got[name])
	}
	// The numbers docs/experiments.md shows (sia and gavel are
	// examples/simulate's table for the same run).
	assert.Equal(t, "sia        jobs 160  avg JCT 0.556 h  p99 7.68 h  makespan 12.19 h  GPU-h/job 3.93  restarts/job 3.66", got["sia"])
	assert.Equal(t, "gavel      jobs 160  avg JCT 1.798 h  p99 21.77 h  makespan 27.27 h  GPU-h/job 7.14  restarts/job 3.72", got["gavel"])
	assert.Equal(t, WantSticky, got["sia-sticky"])
}

// WantSticky is the sticky policy's line of docs/experiments.md §1.
const WantSticky = "sia-sticky jobs 160  avg JCT 0.546 h  p99 7.37 h  makespan 12.36 h  GPU-h/job 3.72  restarts/job 3.26"

// TestSameNumbersAsExamplesSimulate: the library, used from this module,
// gives examples/simulate's numbers for the built-in policies, job by job
// and to the last bit.
func TestSameNumbersAsExamplesSimulate(t *testing.T) {
	cluster, truth, wl, dir := saturn1(t)
	jobs := filepath.Join(t.TempDir(), "jobs.json")
	var out, errb bytes.Buffer
	err := simcli.Run(context.Background(), []string{"-data", filepath.Join(dir, "profiles"), "-workload", wl.File,
		"-policy", "sia,gavel", "-noftf", "-jobs-json", jobs}, &out, &errb)
	require.NoError(t, err, errb.String())
	b, err := os.ReadFile(jobs)
	require.NoError(t, err)
	var rows []simcli.JobRow
	require.NoError(t, json.Unmarshal(b, &rows))

	siaPol, err := siapolicy.New(cluster, truth, siapolicy.Options{})
	require.NoError(t, err)
	lib := map[string]*sim.Result{
		"sia":   run(t, cluster, truth, wl, nil, siaPol),
		"gavel": run(t, cluster, truth, wl, &sim.Options{Round: 360, Rigid: true}, gavel.New(cluster, truth, 360)),
	}
	require.Len(t, rows, 2*len(wl.Jobs))
	for _, r := range rows {
		res := lib[r.Policy]
		require.NotNil(t, res, r.Policy)
		var j *sim.JobResult
		for k := range res.Jobs {
			if res.Jobs[k].Name == r.Job {
				j = &res.Jobs[k]
			}
		}
		require.NotNil(t, j, r.Job)
		assert.Equal(t, j.JCT, r.JCT, "%s %s", r.Policy, r.Job)
		assert.Equal(t, j.Start, r.Start, "%s %s", r.Policy, r.Job)
		assert.Equal(t, j.Restarts, r.Restarts, "%s %s", r.Policy, r.Job)
		assert.Equal(t, j.GPUHours(), r.GPUHours, "%s %s", r.Policy, r.Job)
	}
}

// TestPSweep is docs/experiments.md §2: Sia's fairness exponent p on
// saturn workload-1.
func TestPSweep(t *testing.T) {
	cluster, truth, wl, _ := saturn1(t)
	var lines []string
	for _, p := range []float64{-1, -0.5, 0.5, 1} {
		pol, err := siapolicy.New(cluster, truth, siapolicy.Options{Name: fmt.Sprintf("p=%g", p), Sia: &sia.Options{Artifact: sia.PublishedArtifact(), P: p}})
		require.NoError(t, err)
		res := run(t, cluster, truth, wl, nil, pol)
		lines = append(lines, line(sim.Summarize([]*sim.Result{res})))
		t.Log(lines[len(lines)-1])
	}
	assert.Equal(t, WantPSweep, lines)
}

// WantPSweep are the p sweep's lines of docs/experiments.md §2.
var WantPSweep = []string{
	"p=-1       jobs 160  avg JCT 0.561 h  p99 8.63 h  makespan 12.30 h  GPU-h/job 3.93  restarts/job 3.62",
	"p=-0.5     jobs 160  avg JCT 0.556 h  p99 7.68 h  makespan 12.19 h  GPU-h/job 3.93  restarts/job 3.66", // the default: examples/simulate's sia line
	"p=0.5      jobs 160  avg JCT 0.576 h  p99 8.05 h  makespan 13.09 h  GPU-h/job 3.83  restarts/job 4.65",
	"p=1        jobs 160  avg JCT 0.600 h  p99 7.75 h  makespan 12.24 h  GPU-h/job 4.13  restarts/job 5.00",
}

// firstFit is a policy written from scratch: jobs in arrival order get
// their requested GPUs on the first type with that many free; running jobs
// keep theirs.
type firstFit struct{ truth sim.Truth }

func (firstFit) Name() string { return "first-fit" }

func (p firstFit) Schedule(_ context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	free := map[string][]int{}
	for _, g := range s.Cluster.Groups {
		free[g.Type] = make([]int, g.Nodes)
		for i := range free[g.Type] {
			free[g.Type][i] = g.GPUsPerNode
		}
	}
	out := map[string]sim.Alloc{}
	for _, j := range s.Jobs {
		if a := j.Alloc(); a.GPUs() > 0 {
			out[j.Name()] = a
			for _, n := range a.Nodes {
				free[a.Type][n]--
			}
		}
	}
	for _, j := range s.Jobs {
		if j.Alloc().GPUs() > 0 {
			continue
		}
		for _, t := range s.Cluster.Types() {
			if !p.truth.Supports(j.Spec.App, t) {
				continue
			}
			var nodes []int
			for n, f := range free[t] {
				for k := 0; k < f && len(nodes) < j.Spec.Replicas; k++ {
					nodes = append(nodes, n)
				}
			}
			if len(nodes) == j.Spec.Replicas {
				for _, n := range nodes {
					free[t][n]--
				}
				out[j.Name()] = sim.Alloc{Type: t, Nodes: nodes}
				break
			}
		}
	}
	return out, nil
}

// TestPropertyRandomSnapshots is docs/experiments.md §3: on 200 random
// states, first-fit and Sia only return allocations the cluster can hold,
// and first-fit never preempts a running job.
func TestPropertyRandomSnapshots(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	cluster, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	for seed := uint64(0); seed < 200; seed++ {
		s, err := simtest.RandomState(rand.New(rand.NewPCG(seed, 7)), cluster, truth, nil)
		require.NoError(t, err)
		siaPol, err := siapolicy.New(cluster, truth, siapolicy.Options{})
		require.NoError(t, err)
		for _, p := range []sim.Policy{firstFit{truth}, siaPol} {
			allocs, err := p.Schedule(context.Background(), s)
			require.NoError(t, err, "seed %d %s", seed, p.Name())
			require.NoError(t, sim.CheckAllocations(s, truth, allocs), "seed %d %s", seed, p.Name())
			if p.Name() == "first-fit" {
				for _, j := range s.Jobs {
					if j.Alloc().GPUs() > 0 {
						assert.Equal(t, j.Alloc(), allocs[j.Name()], "seed %d: %s kept", seed, j.Name())
					}
				}
			}
		}
	}
}

// TestJCTCDFPlot is docs/experiments.md §4: the JCT CDF of first-fit, Sia
// and Gavel on a generated workload under the built-in model.
func TestJCTCDFPlot(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	cluster, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	wl, err := sim.Generate(1, 4, 20)
	require.NoError(t, err)
	siaPol, err := siapolicy.New(cluster, truth, siapolicy.Options{})
	require.NoError(t, err)
	var series []simcli.Series
	var lines []string
	for _, r := range []*sim.Result{
		run(t, cluster, truth, wl, &sim.Options{Rigid: true}, firstFit{truth}),
		run(t, cluster, truth, wl, nil, siaPol),
		run(t, cluster, truth, wl, &sim.Options{Round: 360, Rigid: true}, gavel.New(cluster, truth, 360)),
	} {
		s := sim.Summarize([]*sim.Result{r})
		t.Log(line(s))
		lines = append(lines, line(s))
		series = append(series, simcli.Series{Name: s.Policy, JCTs: s.JCTs})
	}
	assert.Equal(t, []string{
		"first-fit  jobs 76  avg JCT 0.647 h  p99 10.70 h  makespan 12.79 h  GPU-h/job 4.64  restarts/job 0.00",
		"sia        jobs 76  avg JCT 0.381 h  p99 5.13 h  makespan 7.23 h  GPU-h/job 3.40  restarts/job 3.53",
		"gavel      jobs 76  avg JCT 0.586 h  p99 7.76 h  makespan 9.86 h  GPU-h/job 4.24  restarts/job 1.58",
	}, lines)
	file := filepath.Join(t.TempDir(), "jct_cdf.png")
	if d := os.Getenv("EXPERIMENTS_PLOT_DIR"); d != "" {
		file = filepath.Join(d, "jct_cdf.png")
	}
	require.NoError(t, simcli.WriteJCTCDF(file, series...))
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(10000))
}
