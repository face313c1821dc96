package simcli

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// The hybrid-parallel GPT job of the paper's §5.3: a 2.8B-parameter GPT
// trained with pipeline (model) parallelism inside each replica and data
// parallelism across replicas. Each replica is a pipeline of GPTStages[type]
// GPUs that runs GPTMicroBatches micro-batches of one sample per optimizer
// step; its statistical efficiency is BERT's (the profiles' validation
// curves are BERT's).
var (
	// GPTStages are the pipeline stages (GPUs per replica) per profile type:
	// 2 on the A100 nodes (dgx-ext), 8 on the RTX nodes.
	GPTStages = map[string]int{"dgx-ext": 2, "rtx": 8}
	// GPTMicroBatches is the number of size-1 micro-batches per replica and
	// step.
	GPTMicroBatches = 48
)

// GPTPoint is the GPT job's throughput on one profiled configuration.
type GPTPoint struct {
	Type            string // profile type (dgx-ext = A100, rtx)
	Stages          int
	GPUs, Nodes     int
	Replicas        int     // data-parallel pipeline replicas, GPUs / Stages
	Batch           int     // global batch, MicroBatches · Replicas
	MicroBatchTime  float64 // measured time of one size-1 micro-batch per stage, s
	AllReduceTime   float64 // measured all-reduce time of the configuration, s
	Profiled        float64 // samples/s from the profile: batch / (3((S−1)+m)·fwd + all-reduce)
	ProfiledNoSync  float64 // samples/s without the all-reduce (the published simulator's rule)
	Model           float64 // samples/s of the library's fitted goodput.Model (0 above MaxBatch)
	ModelEfficiency float64 // statistical efficiency at Batch (BERT's), 0 above MaxBatch
}

// GPTScaling reads profiles/gpt_pmp under dataDir (the -data folder of
// examples/simulate), fits the job's hybrid-parallel throughput model per
// type with a bootstrap.Tracker (Spec.Stages and MicroBatches, every
// profiled configuration at micro-batch size 1 and 2) and returns, for every
// profiled GPU count that is a multiple of the type's stages, the measured
// and the modelled throughput, sorted by type and GPUs.
func GPTScaling(dataDir string) ([]GPTPoint, error) {
	dir := filepath.Join(dataDir, "gpt_pmp")
	m, err := bootstrap.ReadModelDir(dir)
	if err != nil {
		return nil, err
	}
	m0, maxBatch, ok := m.BatchRange()
	if !ok || len(m.Validation[0].Rows) == 0 {
		return nil, fmt.Errorf("%s: no validation curves (the job's statistical efficiency)", dir)
	}
	spec := bootstrap.Spec{InitBatch: m0, MaxBatch: maxBatch, Stages: map[string]int{}, MicroBatches: GPTMicroBatches,
		Grad: m.Validation[0].Rows[0].Grad()}
	for _, t := range m.TypeNames() {
		if s, ok := GPTStages[t]; ok {
			spec.Stages[t] = s
		}
	}
	if len(spec.Stages) == 0 {
		return nil, fmt.Errorf("%s: none of the types %v has pipeline stages (want %v)", dir, m.TypeNames(), GPTStages)
	}
	tr, err := bootstrap.New(spec, &bootstrap.Options{Mode: bootstrap.Oracle})
	if err != nil {
		return nil, err
	}
	var out []GPTPoint
	for _, tp := range m.Types {
		s, ok := spec.Stages[tp.Type]
		if !ok {
			continue
		}
		obs, pts := gptObservations(tp, s)
		if len(obs) == 0 {
			return nil, fmt.Errorf("%s: type %s has no configuration in whole pipelines of %d GPUs", dir, tp.Type, s)
		}
		if err := tr.Seed(tp.Type, obs...); err != nil {
			return nil, fmt.Errorf("%s: fitting type %s: %w", dir, tp.Type, err)
		}
		model, _ := tr.Model(tp.Type)
		for i := range pts {
			p := &pts[i]
			if c, ok := model.Best(p.Nodes, p.Replicas); ok {
				p.Model, p.ModelEfficiency = c.Throughput, c.Efficiency
			}
		}
		out = append(out, pts...)
	}
	return out, nil
}

// gptObservations turns a type's profile rows into tracker observations
// (replicas = pipelines, step time = micro-batch time + all-reduce) and the
// measured throughput of every micro-batch-1 configuration.
func gptObservations(tp bootstrap.TypeProfile, stages int) ([]goodput.Observation, []GPTPoint) {
	var obs []goodput.Observation
	byGPUs := map[int]GPTPoint{}
	for _, o := range tp.Observations() {
		gpus := o.Replicas // profile rows count GPUs
		if gpus%stages != 0 {
			continue
		}
		r := gpus / stages
		obs = append(obs, goodput.Observation{Nodes: o.Nodes, Replicas: r, LocalBatch: o.LocalBatch,
			StepTime: o.StepTime + o.SyncTime, SyncTime: o.SyncTime})
		if o.LocalBatch != 1 {
			continue
		}
		if _, dup := byGPUs[gpus]; dup {
			continue
		}
		batch := GPTMicroBatches * r
		pipe := 3 * float64(stages-1+GPTMicroBatches) * o.StepTime
		byGPUs[gpus] = GPTPoint{Type: tp.Type, Stages: stages, GPUs: gpus, Nodes: o.Nodes, Replicas: r, Batch: batch,
			MicroBatchTime: o.StepTime, AllReduceTime: o.SyncTime,
			Profiled: float64(batch) / (pipe + o.SyncTime), ProfiledNoSync: float64(batch) / pipe}
	}
	var pts []GPTPoint
	for _, p := range byGPUs {
		pts = append(pts, p)
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].GPUs < pts[b].GPUs })
	return obs, pts
}

// WriteGPTTable prints the points as a table.
func WriteGPTTable(w io.Writer, pts []GPTPoint) {
	fmt.Fprintf(w, "%-8s %6s %4s %5s %8s %6s %8s %8s %10s %10s %10s %6s\n",
		"type", "stages", "GPUs", "nodes", "replicas", "batch", "fwd_s", "allred_s", "prof_xput", "nosync_xp", "model_xput", "eff")
	for _, p := range pts {
		fmt.Fprintf(w, "%-8s %6d %4d %5d %8d %6d %8.3f %8.4f %10.3f %10.3f %10.3f %6.3f\n",
			p.Type, p.Stages, p.GPUs, p.Nodes, p.Replicas, p.Batch, p.MicroBatchTime, p.AllReduceTime,
			p.Profiled, p.ProfiledNoSync, p.Model, p.ModelEfficiency)
	}
}

// WriteGPTCSV writes the points as CSV.
func WriteGPTCSV(file string, pts []GPTPoint) error {
	return writeFile(file, func(f *os.File) error {
		w := csv.NewWriter(f)
		w.Write([]string{"type", "stages", "gpus", "nodes", "replicas", "global_batch", "microbatch_s", "allreduce_s",
			"profiled_samples_per_s", "profiled_nosync_samples_per_s", "model_samples_per_s", "model_efficiency"})
		g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
		for _, p := range pts {
			w.Write([]string{p.Type, strconv.Itoa(p.Stages), strconv.Itoa(p.GPUs), strconv.Itoa(p.Nodes), strconv.Itoa(p.Replicas),
				strconv.Itoa(p.Batch), g(p.MicroBatchTime), g(p.AllReduceTime), g(p.Profiled), g(p.ProfiledNoSync), g(p.Model), g(p.ModelEfficiency)})
		}
		w.Flush()
		return w.Error()
	})
}

// GPTPlotMaxGPUs is the largest GPU count drawn (the paper's clusters have
// 64 GPUs); the table and CSV have every profiled count.
const GPTPlotMaxGPUs = 64

// WriteGPTScalingPlot draws the GPT job's throughput against its GPU count
// per type (the left panel of the paper's §5.3 figure): measured (solid,
// with the all-reduce) and the library's model (dashed), into
// dir/gpt_scaling.png and .svg.
func WriteGPTScalingPlot(dir string, pts []GPTPoint) error {
	p := newPlot("GPT 2.8B (hybrid parallel): throughput vs GPUs", "GPUs", "samples/s")
	var types []string
	byType := map[string][]GPTPoint{}
	for _, pt := range pts {
		if _, ok := byType[pt.Type]; !ok {
			types = append(types, pt.Type)
		}
		byType[pt.Type] = append(byType[pt.Type], pt)
	}
	for i, t := range types {
		var meas, model plotter.XYs
		for _, pt := range byType[t] {
			if pt.GPUs > GPTPlotMaxGPUs {
				continue
			}
			meas = append(meas, plotter.XY{X: float64(pt.GPUs), Y: pt.Profiled})
			if pt.Model > 0 {
				model = append(model, plotter.XY{X: float64(pt.GPUs), Y: pt.Model})
			}
		}
		l, s, err := plotter.NewLinePoints(meas)
		if err != nil {
			return err
		}
		l.Color, s.Color, s.Shape = plotutil.Color(i), plotutil.Color(i), plotutil.Shape(i)
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("%s, %d stages: profiled", t, byType[t][0].Stages), l, s)
		if len(model) > 0 {
			ml, err := plotter.NewLine(model)
			if err != nil {
				return err
			}
			ml.Color, ml.Dashes = plotutil.Color(i), []vg.Length{vg.Points(4), vg.Points(3)}
			ml.Width = vg.Points(1.5)
			p.Add(ml)
			p.Legend.Add(fmt.Sprintf("%s: library model (batch ≤ max)", t), ml)
		}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	return savePlot(p, 6*vg.Inch, 4*vg.Inch, dir, "gpt_scaling")
}
