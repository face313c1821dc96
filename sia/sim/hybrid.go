package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// Hybrid-parallel (pipeline) jobs, paper §5.3. Each data-parallel replica of
// such a job is a pipeline of App.Stages[type] GPUs that runs
// App.MicroBatches micro-batches of one sample per optimizer step. The job
// scales in whole replicas only; its batch size is never tuned (it is
// MicroBatches × replicas). One optimizer step of r replicas on a placement
// takes
//
//	T = 3·((S−1)+m)·T_fwd + T_sync
//
// (a 1F1B pipeline flush with backward twice as long as forward: S − 1
// fill steps plus m micro-batches, each a forward and a backward), where
// T_fwd is the measured time of one size-1 micro-batch through one stage and
// T_sync the measured all-reduce of the placement, both from the profiles
// (Truth.StepTime at per-GPU batch 1). This is the same rule as the
// library's hybrid goodput model (goodput.Model with Stages and
// MicroBatches).

// GPTApp is the application name of the 2.8B-parameter GPT job of paper
// §5.3 (profiles folder gpt_pmp): 2 pipeline stages on the A100 nodes, 8 on
// the RTX nodes, 48 micro-batches of size 1 per replica and step, BERT's
// statistical efficiency (the folder's validation curves). Workload rows
// with application "gpt" are this job.
const GPTApp = "gpt"

// hybridApp describes a hybrid-parallel application of the profiles folder.
type hybridApp struct {
	dir          string         // sub-folder of the profiles folder
	stages       map[string]int // profile type suffix → pipeline stages
	microBatches int
}

// hybridApps are the hybrid-parallel applications LoadTrace knows, by name.
var hybridApps = map[string]hybridApp{
	GPTApp: {dir: "gpt_pmp", stages: map[string]int{"dgx-ext": 2, "rtx": 8}, microBatches: 48},
}

// ErrHybridUnsupported is wrapped by the error Run returns when a workload
// has a hybrid-parallel job and the policy does not implement
// HybridScheduler: a baseline that would treat its GPUs as independent
// data-parallel replicas would silently mis-simulate it.
var ErrHybridUnsupported = errors.New("sim: policy cannot schedule hybrid-parallel jobs")

// HybridScheduler is implemented by policies that schedule hybrid-parallel
// jobs in whole replicas (App.Stages GPUs of a type each). Run refuses a
// workload with a hybrid-parallel job under a policy that does not
// implement it (or returns false), before the first round.
type HybridScheduler interface {
	// SchedulesHybrid reports whether the policy allocates hybrid-parallel
	// jobs in whole replicas.
	SchedulesHybrid() bool
}

// Hybrid reports whether the application is hybrid-parallel (pipeline
// stages per type, see App.Stages).
func (a *App) Hybrid() bool { return a != nil && (len(a.Stages) > 0 || a.MicroBatches > 0) }

// ReplicaGPUs returns the GPUs of one replica of the application on a type:
// its pipeline stages for a hybrid-parallel application (false on a type
// without stages), 1 for a data-parallel one.
func (a *App) ReplicaGPUs(typ string) (int, bool) {
	if !a.Hybrid() {
		return 1, true
	}
	s, ok := a.Stages[typ]
	return s, ok && s > 0
}

// pipelineStep returns the time of one optimizer step of a hybrid-parallel
// job with the given stages and micro-batches from the per-stage size-1
// micro-batch time fwd and the all-reduce time sync.
func pipelineStep(stages, micro int, fwd, sync float64) float64 {
	return 3*float64(stages-1+micro)*fwd + sync
}

// checkHybridJob checks a hybrid-parallel job of a workload: the policy
// schedules hybrid jobs, and the job is adaptive (the category is empty or
// adaptive, and the run is not rigid).
func checkHybridJob(wl *Workload, spec JobSpec, app *App, rigid bool, pol Policy) error {
	if hs, ok := pol.(HybridScheduler); !ok || !hs.SchedulesHybrid() {
		return &InputError{File: wl.File, Line: spec.Line, Job: spec.Name, Field: "application",
			Reason: fmt.Sprintf("policy %s cannot schedule hybrid-parallel job (%s, pipeline stages %s): it does not allocate whole replicas",
				pol.Name(), app.Name, stagesString(app.Stages)), Err: ErrHybridUnsupported}
	}
	if spec.Category != "" && spec.Category != CategoryAdaptive {
		return inputErr(wl.File, spec.Line, spec.Name, "category", "%q: hybrid-parallel job (%s) must be adaptive: it scales in whole replicas and its batch is %d micro-batches per replica",
			spec.Category, app.Name, app.MicroBatches)
	}
	if rigid {
		return inputErr(wl.File, spec.Line, spec.Name, "Rigid", "hybrid-parallel job (%s) cannot run rigid: its GPU count per replica depends on the type (%s)", app.Name, stagesString(app.Stages))
	}
	return nil
}

// stagesString formats a stages map as "a100:2, rtx:8".
func stagesString(st map[string]int) string {
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, st[k])
	}
	return strings.Join(parts, ", ")
}

// checkWholeReplicas checks that an allocation of a hybrid-parallel job is
// whole replicas: its type has stages, its GPU count is a multiple of them
// and, when a replica fits on one node, every node holds whole replicas (a
// pipeline never straddles nodes, as in the profiles).
func checkWholeReplicas(name string, app *App, a Alloc, perNode int) error {
	s, ok := app.ReplicaGPUs(a.Type)
	if !ok {
		return inputErr("", 0, name, "Type", "hybrid-parallel job (%s) has no pipeline stages on %s (stages %s)", app.Name, a.Type, stagesString(app.Stages))
	}
	if s == 1 {
		return nil
	}
	if len(a.Nodes)%s != 0 {
		return inputErr("", 0, name, "Nodes", "%d GPUs of %s is not a whole number of replicas of %d GPUs (hybrid-parallel job %s)", len(a.Nodes), a.Type, s, app.Name)
	}
	if s > perNode {
		return nil
	}
	per := map[int]int{}
	for _, n := range a.Nodes {
		per[n]++
	}
	nodes := make([]int, 0, len(per))
	for n := range per {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	for _, n := range nodes {
		if per[n]%s != 0 {
			return inputErr("", 0, name, "Nodes", "node %d of %s holds %d GPUs, not whole replicas of %d GPUs (hybrid-parallel job %s): a pipeline would straddle nodes", n, a.Type, per[n], s, app.Name)
		}
	}
	return nil
}

// loadHybrid reads the hybrid-parallel applications' folders of a profiles
// folder into t (those without a folder are skipped). The files go through
// the same bootstrap readers and checks as the other applications', except
// the sync-below-step check: a pipeline profile's step_time is the
// per-stage micro-batch time, which the all-reduce may exceed.
func (t *TraceTruth) loadHybrid(dir string, types []string) error {
	for _, name := range slices.Sorted(maps.Keys(hybridApps)) {
		h := hybridApps[name]
		adir := filepath.Join(dir, h.dir)
		st, err := os.Stat(adir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return inputErr(adir, 0, "", "", "%v", errors.Unwrap(err))
		}
		if !st.IsDir() {
			return inputErr(adir, 0, "", "", "not a folder (want the model's profiles)")
		}
		var suffixes []string
		for _, typ := range types {
			if _, ok := h.stages[ProfileTypes[typ]]; ok {
				suffixes = append(suffixes, ProfileTypes[typ])
			}
		}
		m, err := bootstrap.ReadModelDirWith(adir, &bootstrap.ReadOptions{Types: suffixes})
		if err != nil {
			return profileErr(err)
		}
		var keep []string
		for _, typ := range types {
			if _, ok := h.stages[ProfileTypes[typ]]; ok {
				keep = append(keep, typ)
			}
		}
		a, err := newTraceApp(adir, name, m, keep)
		if err != nil {
			return err
		}
		a.app.MicroBatches = h.microBatches
		a.app.Stages = map[string]int{}
		for typ := range a.types {
			a.app.Stages[typ] = h.stages[ProfileTypes[typ]]
		}
		if a.app.MaxBatch < h.microBatches {
			return inputErr(adir, 0, "", "", "largest validated batch %d is below one replica's %d micro-batches", a.app.MaxBatch, h.microBatches)
		}
		for typ, tt := range a.types {
			s := a.app.Stages[typ]
			tt.xput1 = 0
			if fwd, sync, ok := t.stepOf(tt, []int{s}, 1); ok {
				tt.xput1 = float64(h.microBatches) / pipelineStep(s, h.microBatches, fwd, sync)
			}
		}
		t.apps[name] = a
	}
	return nil
}

// stepOf interpolates a type's step time as StepTime does.
func (t *TraceTruth) stepOf(tt *traceType, shape []int, local int) (float64, float64, bool) {
	b := float64(local)
	if pts, ok := tt.placements[placementID(shape)]; ok {
		s, y := interpB(pts, b)
		return s, y, true
	}
	n := min(len(shape), 16)
	return tt.interpNR(n, sum(shape), b)
}

// hybridProfile returns the profile rows of a hybrid-parallel application in
// the library's units (goodput.Observation of a pipeline job): Replicas
// counts pipelines (rows whose GPU count is not a whole number of replicas
// are left out), StepTime is the micro-batch that ends with the all-reduce
// (per-stage time + all-reduce) and SyncTime the all-reduce.
func hybridProfile(rows []profRow, stages, maxNodes, maxReplicas int) []goodput.Observation {
	seen := map[[3]int]bool{}
	var out []goodput.Observation
	for _, r := range rows {
		if r.replicas%stages != 0 {
			continue
		}
		p := r.replicas / stages
		if (maxNodes > 0 && r.nodes > maxNodes) || (maxReplicas > 0 && p > maxReplicas) {
			continue
		}
		k := [3]int{r.nodes, p, int(r.local)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, goodput.Observation{Nodes: r.nodes, Replicas: p, LocalBatch: int(r.local), StepTime: r.step + r.sync, SyncTime: r.sync})
	}
	return out
}

// hybridSeed returns the rows of one replica on one node.
func hybridSeed(rows []profRow, stages int) []goodput.Observation {
	return hybridProfile(rows, stages, 1, 1)
}

// stagesOf returns the stages of app on typ when app is hybrid-parallel.
func (t *TraceTruth) stagesOf(app, typ string) (int, bool) {
	a, ok := t.apps[app]
	if !ok || !a.app.Hybrid() {
		return 0, false
	}
	s, ok := a.app.Stages[typ]
	return s, ok
}

// HybridApps returns the names of the hybrid-parallel applications the
// ground truth has loaded, sorted.
func (t *TraceTruth) HybridApps() []string {
	var out []string
	for n, a := range t.apps {
		if a.app.Hybrid() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// gain is the progress per optimizer step at a global batch, in iterations
// at M0 (goodput.Gain).
func (a *App) gain(g goodput.GradStats, batch float64) float64 {
	return goodput.Gain(g, float64(a.InitBatch), batch)
}
