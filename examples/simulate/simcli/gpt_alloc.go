package simcli

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
)

// GPTJobName is the name of the GPT job AddGPT adds to a workload.
const GPTJobName = "gpt-0"

// AddGPT returns a copy of wl with the hybrid-parallel GPT job of the
// paper's §5.3 (application sim.GPTApp) submitted at submit seconds, asking
// for the largest batch (its batch_size caps Sia's estimates under
// siapolicy.Options.CapAtRequest). A workload file can carry the same job as
// a row "gpt-0,<time>,gpt,1,384".
func AddGPT(wl *sim.Workload, submit float64, truth sim.Truth) (*sim.Workload, error) {
	app, ok := truth.App(sim.GPTApp)
	if !ok {
		return nil, fmt.Errorf("ground truth %s has no %s application (profiles/gpt_pmp)", truth.Name(), sim.GPTApp)
	}
	out := &sim.Workload{Name: wl.Name + "+gpt", File: wl.File}
	job := sim.JobSpec{Name: GPTJobName, Submit: submit, App: sim.GPTApp, Replicas: 1, Batch: app.MaxBatch, Category: sim.CategoryAdaptive}
	added := false
	for _, j := range wl.Jobs {
		if j.Name == GPTJobName {
			return nil, fmt.Errorf("workload %s already has a job %q", wl.Name, GPTJobName)
		}
		if !added && j.Submit > submit {
			out.Jobs = append(out.Jobs, job)
			added = true
		}
		out.Jobs = append(out.Jobs, j)
	}
	if !added {
		out.Jobs = append(out.Jobs, job)
	}
	return out, out.Validate()
}

// addGPTFlag applies the -gpt flag: the GPT job added to every workload at
// the given submission time (a Go duration, at least 0), or the workloads
// unchanged when the flag is empty.
func addGPTFlag(at string, wls []*sim.Workload, truth sim.Truth) ([]*sim.Workload, error) {
	if at == "" {
		return wls, nil
	}
	d, err := time.ParseDuration(at)
	if err != nil || d < 0 {
		return nil, fmt.Errorf("-gpt %q: want a duration of at least 0 (for example 0s or 10m)", at)
	}
	out := make([]*sim.Workload, len(wls))
	for i, wl := range wls {
		if out[i], err = AddGPT(wl, d.Seconds(), truth); err != nil {
			return nil, fmt.Errorf("-gpt: %w", err)
		}
	}
	return out, nil
}

// GPTRound is one scheduling round of a trace with the GPT job.
type GPTRound struct {
	Time   float64        // simulated seconds
	GPT    map[string]int // the GPT job's GPUs per type (empty: none)
	Active int            // submitted, unfinished jobs (GPT included)
	Queued int            // active jobs without GPUs
	InUse  int            // GPUs in use by all jobs
}

// GPTTrace is a simulated trace with the GPT job.
type GPTTrace struct {
	Workload string
	Policy   string
	Types    []string // cluster GPU types, in cluster order
	Total    map[string]int
	Rounds   []GPTRound // from the GPT job's submission to its completion
	Job      sim.JobResult
	Summary  sim.Summary // every job, GPT included
}

// RunGPTTrace simulates a workload with the GPT job added at submit
// seconds, under Sia (siapolicy with the given sia options; nil: the
// published artifact's variant), and records the GPT job's allocation in
// every round.
func RunGPTTrace(ctx context.Context, c sim.Cluster, truth sim.Truth, wl *sim.Workload, submit float64, so *sia.Options) (*GPTTrace, error) {
	wl, err := AddGPT(wl, submit, truth)
	if err != nil {
		return nil, err
	}
	pol, err := siapolicy.New(c, truth, siapolicy.Options{Sia: so})
	if err != nil {
		return nil, err
	}
	res, err := sim.Run(ctx, sim.Config{Cluster: c, Truth: truth, LogAllocations: true}, wl, pol)
	if err != nil {
		return nil, err
	}
	tr := &GPTTrace{Workload: wl.Name, Policy: pol.Name(), Types: c.Types(), Total: map[string]int{},
		Summary: sim.Summarize([]*sim.Result{res})}
	for _, g := range c.Groups {
		tr.Total[g.Type] = g.Nodes * g.GPUsPerNode
	}
	for _, j := range res.Jobs {
		if j.Name == GPTJobName {
			tr.Job = j
		}
	}
	end := tr.Job.Completion
	if end < 0 {
		end = math.Inf(1)
	}
	for _, r := range res.Rounds {
		if r.Now < submit || r.Now > end {
			continue
		}
		g := GPTRound{Time: r.Now, GPT: map[string]int{}, Active: r.Active, Queued: r.Active - r.Running}
		if a, ok := r.Allocations[GPTJobName]; ok {
			g.GPT[a.Type] = a.GPUs()
		}
		for _, n := range r.GPUsByTyp {
			g.InUse += n
		}
		tr.Rounds = append(tr.Rounds, g)
	}
	return tr, nil
}

// GPTPhase summarises the GPT job over a window of its rounds.
type GPTPhase struct {
	From, To   float64 // hours since the start of the trace
	MeanGPUs   map[string]float64
	MinGPUs    int // all types
	MaxGPUs    int
	MeanActive float64
	MeanQueued float64
	MeanInUse  float64
}

// Phases cuts the GPT job's rounds into windows of hours hours (a finite
// positive number; otherwise there are no phases). Every phase holds at
// least one round, so there are at most as many phases as rounds.
func (t *GPTTrace) Phases(hours float64) []GPTPhase {
	if !(hours > 0) || math.IsInf(hours, 0) {
		return nil
	}
	var out []GPTPhase
	for i := 0; i < len(t.Rounds); {
		start := math.Floor(t.Rounds[i].Time/3600/hours) * hours
		ph := GPTPhase{From: start, To: start + hours, MeanGPUs: map[string]float64{}, MinGPUs: math.MaxInt}
		n := 0
		for ; i < len(t.Rounds) && (n == 0 || t.Rounds[i].Time/3600 < start+hours); i++ {
			r := t.Rounds[i]
			tot := 0
			for typ, g := range r.GPT {
				ph.MeanGPUs[typ] += float64(g)
				tot += g
			}
			ph.MinGPUs, ph.MaxGPUs = min(ph.MinGPUs, tot), max(ph.MaxGPUs, tot)
			ph.MeanActive += float64(r.Active)
			ph.MeanQueued += float64(r.Queued)
			ph.MeanInUse += float64(r.InUse)
			n++
		}
		for typ := range ph.MeanGPUs {
			ph.MeanGPUs[typ] /= float64(n)
		}
		ph.MeanActive /= float64(n)
		ph.MeanQueued /= float64(n)
		ph.MeanInUse /= float64(n)
		out = append(out, ph)
	}
	return out
}

// WriteGPTPhases prints the phases as a Markdown table.
func WriteGPTPhases(w io.Writer, t *GPTTrace, phases []GPTPhase) {
	fmt.Fprintf(w, "| hours |")
	for _, typ := range t.Types {
		fmt.Fprintf(w, " GPT %s GPUs (mean) |", typ)
	}
	fmt.Fprintf(w, " GPT GPUs min–max | active jobs | queued jobs | cluster GPUs in use |\n|---|")
	for range t.Types {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|---|---|---|\n")
	for _, ph := range phases {
		fmt.Fprintf(w, "| %g–%g |", ph.From, ph.To)
		for _, typ := range t.Types {
			fmt.Fprintf(w, " %.1f |", ph.MeanGPUs[typ])
		}
		fmt.Fprintf(w, " %d–%d | %.1f | %.1f | %.1f |\n", ph.MinGPUs, ph.MaxGPUs, ph.MeanActive, ph.MeanQueued, ph.MeanInUse)
	}
}

// WriteGPTAllocCSV writes one row per round: time, the GPT job's GPUs per
// type, active and queued jobs, GPUs in use.
func WriteGPTAllocCSV(file string, t *GPTTrace) error {
	return writeFile(file, func(f *os.File) error {
		w := csv.NewWriter(f)
		head := []string{"time_s", "time_h"}
		for _, typ := range t.Types {
			head = append(head, "gpt_"+typ+"_gpus")
		}
		w.Write(append(head, "active_jobs", "queued_jobs", "cluster_gpus_in_use"))
		for _, r := range t.Rounds {
			rec := []string{strconv.FormatFloat(r.Time, 'f', 0, 64), strconv.FormatFloat(r.Time/3600, 'f', 4, 64)}
			for _, typ := range t.Types {
				rec = append(rec, strconv.Itoa(r.GPT[typ]))
			}
			w.Write(append(rec, strconv.Itoa(r.Active), strconv.Itoa(r.Queued), strconv.Itoa(r.InUse)))
		}
		w.Flush()
		return w.Error()
	})
}

// WriteGPTAllocPlot draws the right panel of the paper's §5.3 figure: the
// GPT job's GPUs per type over time (top) above the cluster's load (active
// and queued jobs, bottom), into dir/gpt_allocation.png and .svg.
func WriteGPTAllocPlot(dir string, t *GPTTrace) error {
	top := newPlot(fmt.Sprintf("GPT 2.8B in %s (%s): allocation over time", t.Workload, t.Policy), "", "GPT job's GPUs")
	bottom := newPlot("", "hours since the start of the trace", "jobs")
	for i, typ := range t.Types {
		var pts plotter.XYs
		used := false
		for _, r := range t.Rounds {
			pts = append(pts, plotter.XY{X: r.Time / 3600, Y: float64(r.GPT[typ])})
			used = used || r.GPT[typ] > 0
		}
		if !used {
			continue
		}
		if err := addStepLine(top, i, fmt.Sprintf("%s (of %d)", typ, t.Total[typ]), pts); err != nil {
			return err
		}
	}
	var active, queued plotter.XYs
	for _, r := range t.Rounds {
		active = append(active, plotter.XY{X: r.Time / 3600, Y: float64(r.Active)})
		queued = append(queued, plotter.XY{X: r.Time / 3600, Y: float64(r.Queued)})
	}
	if err := addStepLine(bottom, 3, "active jobs", active); err != nil {
		return err
	}
	if err := addStepLine(bottom, 4, "queued jobs", queued); err != nil {
		return err
	}
	for _, p := range []*plot.Plot{top, bottom} {
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.X.Min = 0
		p.Y.Min = 0
	}
	top.X.Max = bottom.X.Max
	return saveGrid([][]*plot.Plot{{top}, {bottom}}, 7*vg.Inch, 5*vg.Inch, dir, "gpt_allocation")
}

// addStepLine adds a series drawn as steps (the value holds until the next
// round), in the i-th colour.
func addStepLine(p *plot.Plot, i int, name string, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.StepStyle = plotter.PostStep
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.2)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
