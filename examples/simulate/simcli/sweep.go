package simcli

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

// Sensitivity sweeps of the paper's §5.7 (Figures 10 and 11), run by
// examples/sensitivity:
//
//   - Figure 10: Sia's fairness exponent p ∈ {−1, −0.5, 0.5, 1} (round 60 s)
//     and the round length ∈ {30, 60, 120, 300} s (p = −0.5): average and p99
//     JCT, makespan and the share of jobs with finish-time fairness ρ > 1;
//   - Figure 11: a share of 0–100 % of the jobs turned into strong-scaling
//     (batch size fixed) or rigid (batch size and GPU count fixed) jobs,
//     average JCT normalised to the all-adaptive run, and finish-time
//     fairness as in Figure 10 (each job's isolated run is that of its
//     category).

// SweepPs and SweepRounds are Figure 10's settings; SweepShares Figure 11's.
var (
	SweepPs     = []float64{-1, -0.5, 0.5, 1}
	SweepRounds = []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second, 300 * time.Second}
	SweepShares = []float64{0, 0.25, 0.5, 0.75, 1}
)

// SweepPoint is one setting of a sweep on one trace, its workloads pooled.
type SweepPoint struct {
	Trace string
	// Sweep is "p" or "round" (Figure 10), or the job kind converted
	// (sim.CategoryStrongScaled or sim.CategoryRigid, Figure 11).
	Sweep string
	// Value is p, the round length in seconds, or the converted share (0..1).
	Value          float64
	Workloads      int
	Jobs           int
	Unfinished     int
	AvgJCTH        float64
	P99JCTH        float64
	MakespanH      float64
	UnfairFraction float64 // NaN without finish-time fairness
	WorstFTF       float64 // NaN without finish-time fairness
	// Normalised is AvgJCTH over the trace's all-adaptive run (Figure 11; NaN
	// for Figure 10).
	Normalised float64
	WallS      float64
}

// ConvertKinds returns a copy of wl in which round(share·n) of its n jobs
// have the given category (sim.CategoryStrongScaled or sim.CategoryRigid) and
// the others are adaptive. The jobs are picked in the order of a hash of
// their name and seed, so a larger share converts a superset of the jobs of
// a smaller one, and the choice does not depend on the order of the file.
func ConvertKinds(wl *sim.Workload, kind string, share float64, seed uint64) (*sim.Workload, error) {
	switch kind {
	case sim.CategoryStrongScaled, sim.CategoryRigid, sim.CategoryAdaptive:
	default:
		return nil, fmt.Errorf("job kind %q: want %s, %s or %s", kind, sim.CategoryStrongScaled, sim.CategoryRigid, sim.CategoryAdaptive)
	}
	if !(share >= 0 && share <= 1) {
		return nil, fmt.Errorf("share %v of %s jobs: want 0..1", share, kind)
	}
	out := &sim.Workload{Name: fmt.Sprintf("%s-%s%g", wl.Name, kind, 100*share), File: wl.File, Jobs: slices.Clone(wl.Jobs)}
	order := make([]int, len(out.Jobs))
	keys := make([]uint64, len(out.Jobs))
	for i, j := range out.Jobs {
		order[i] = i
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", seed, j.Name)
		keys[i] = h.Sum64()
		out.Jobs[i].Category = sim.CategoryAdaptive
	}
	sort.SliceStable(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })
	n := int(share*float64(len(order)) + 0.5)
	for _, i := range order[:n] {
		out.Jobs[i].Category = kind
	}
	return out, nil
}

// sweepConfig is the parsed command line of Sweep.
type sweepConfig struct {
	figures   []int
	traces    []traceArg
	data      string
	cluster   string
	policy    string
	artifact  *sia.ArtifactKnobs // nil: the paper's Sia
	workloads int
	seed      uint64
	out       string
	csvDir    string
}

// traceArg is one NAME=PATH of -traces.
type traceArg struct{ name, path string }

func parseSweepFlags(args []string, stderr io.Writer) (*sweepConfig, error) {
	fs := flag.NewFlagSet("sensitivity", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &sweepConfig{}
	var figs, traces, variant string
	fs.StringVar(&figs, "figures", "10,11", "comma list of figures: 10 (p and round length), 11 (job kinds)")
	fs.StringVar(&traces, "traces", "", "comma list of NAME=PATH (workload CSV or folder of workload-*.csv)")
	fs.StringVar(&c.data, "data", "", "profiles folder (trace ground truth); default: built-in model")
	fs.StringVar(&c.cluster, "cluster", "heterogeneous", "cluster, as examples/simulate's -cluster")
	fs.StringVar(&c.policy, "policy", "sia", "registered policy to sweep")
	fs.StringVar(&variant, "variant", "paper", "Sia's variant: paper or artifact")
	fs.IntVar(&c.workloads, "workloads", 0, "use only the first N workloads of each folder (0 = all)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the choice of converted jobs (Figure 11)")
	fs.StringVar(&c.out, "plot", "", "folder for the figures (PNG and SVG) and their CSV")
	fs.StringVar(&c.csvDir, "csv", "", "folder for the CSV files (default: the -plot folder)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: sensitivity -traces NAME=PATH,... [flags]")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, f := range strings.Split(figs, ",") {
		switch k, _ := strconv.Atoi(strings.TrimSpace(f)); k {
		case 10, 11:
			c.figures = append(c.figures, k)
		default:
			return nil, fmt.Errorf("-figures %q: want 10 and/or 11", figs)
		}
	}
	if traces == "" {
		return nil, fmt.Errorf("-traces: want NAME=PATH,... (for example saturn=$SIA_DATA/workloads/saturn)")
	}
	for _, t := range strings.Split(traces, ",") {
		name, path, ok := strings.Cut(t, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("-traces %q: want NAME=PATH", t)
		}
		for _, prev := range c.traces {
			if prev.name == name {
				return nil, fmt.Errorf("-traces: name %q given twice (its rows would be merged)", name)
			}
		}
		c.traces = append(c.traces, traceArg{name, path})
	}
	switch variant {
	case "paper":
		c.artifact = nil
	case "artifact":
		c.artifact = sia.PublishedArtifact()
	default:
		return nil, fmt.Errorf("-variant %q: want paper or artifact", variant)
	}
	if c.workloads < 0 {
		return nil, fmt.Errorf("-workloads %d: want 0 (all) or more", c.workloads)
	}
	if c.csvDir == "" {
		c.csvDir = c.out
	}
	return c, nil
}

// Sweep runs the sensitivity sweeps of Figures 10 and 11 with the policies
// of r (go doc of examples/sensitivity for the flags), one simulation at a
// time, prints a table per figure to stdout and, with -plot, writes the
// figures and fig10.csv / fig11.csv.
func (r *Registry) Sweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sc, err := parseSweepFlags(args, stderr)
	if err != nil {
		return err
	}
	if _, ok := r.lookup(sc.policy); !ok {
		return fmt.Errorf("-policy: unknown policy %q (known: %s)", sc.policy, strings.Join(r.Names(), ", "))
	}
	// the output folders before the sweep, which takes hours on the
	// published traces
	for _, d := range []struct{ flag, dir string }{{"-plot", sc.out}, {"-csv", sc.csvDir}} {
		if d.dir == "" {
			continue
		}
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return fmt.Errorf("%s: %w", d.flag, err)
		}
	}
	cl, err := sim.ParseCluster(sc.cluster, 1)
	if err != nil {
		return fmt.Errorf("-cluster: %w", err)
	}
	var truth sim.Truth
	if sc.data != "" {
		truth, err = sim.LoadTrace(sc.data, cl.Types())
	} else {
		truth, err = sim.LoadModel()
	}
	if err != nil {
		return err
	}
	iso := sim.NewIsolatedRuns(truth) // every point's FTF shares the isolated runs
	var fig10, fig11 []SweepPoint
	for _, tr := range sc.traces {
		wls, err := sim.LoadWorkloads(tr.path)
		if err != nil {
			return fmt.Errorf("-traces %s: %w", tr.name, err)
		}
		if sc.workloads > 0 && len(wls) > sc.workloads {
			wls = wls[:sc.workloads]
		}
		run := func(sweep string, value float64, c *config, wls []*sim.Workload) (SweepPoint, error) {
			o, err := r.runPolicy(ctx, c, sc.policy, cl, truth, iso, wls, stderr)
			if err != nil {
				return SweepPoint{}, err
			}
			return sweepPoint(tr.name, sweep, value, o), nil
		}
		base := func() *config {
			return &config{policies: []string{sc.policy}, round: 60 * time.Second, artifact: sc.artifact, seed: sc.seed, noFTF: true, parallel: 1}
		}
		if slices.Contains(sc.figures, 10) {
			pts, err := sweepFigure10(tr.name, wls, base, run, stderr)
			if err != nil {
				return err
			}
			fig10 = append(fig10, pts...)
		}
		if slices.Contains(sc.figures, 11) {
			pts, err := sweepFigure11(wls, sc.seed, base, run)
			if err != nil {
				return err
			}
			fig11 = append(fig11, pts...)
		}
	}
	return writeSweeps(sc, fig10, fig11, stdout)
}

type sweepRun func(sweep string, value float64, c *config, wls []*sim.Workload) (SweepPoint, error)

// sweepFigure10 runs p and the round length, one at a time around the
// defaults (p = −0.5, 60 s), with finish-time fairness.
func sweepFigure10(trace string, wls []*sim.Workload, base func() *config, run sweepRun, stderr io.Writer) ([]SweepPoint, error) {
	var out []SweepPoint
	var def SweepPoint
	for _, p := range SweepPs {
		c := base()
		c.p, c.noFTF = p, false
		pt, err := run("p", p, c, wls)
		if err != nil {
			return nil, err
		}
		if p == -0.5 {
			def = pt
		}
		out = append(out, pt)
	}
	for _, d := range SweepRounds {
		if d == 60*time.Second && def.Jobs > 0 {
			pt := def // the same run as p = −0.5
			pt.Sweep, pt.Value = "round", d.Seconds()
			out = append(out, pt)
			continue
		}
		c := base()
		c.round, c.roundSet, c.noFTF = d, true, false
		pt, err := run("round", d.Seconds(), c, wls)
		if err != nil {
			return nil, err
		}
		out = append(out, pt)
	}
	fmt.Fprintf(stderr, "figure 10 on %s done\n", trace)
	return out, nil
}

// sweepFigure11 converts a growing share of the jobs to strong-scaling and
// to rigid jobs, with finish-time fairness; the all-adaptive run (share 0)
// is shared by both and is the normaliser.
func sweepFigure11(wls []*sim.Workload, seed uint64, base func() *config, run sweepRun) ([]SweepPoint, error) {
	var out []SweepPoint
	var adaptive SweepPoint
	for _, kind := range []string{sim.CategoryStrongScaled, sim.CategoryRigid} {
		for _, share := range SweepShares {
			if share == 0 && adaptive.Jobs > 0 {
				pt := adaptive
				pt.Sweep = kind
				out = append(out, pt)
				continue
			}
			conv := make([]*sim.Workload, len(wls))
			for i, wl := range wls {
				var err error
				if conv[i], err = ConvertKinds(wl, kind, share, seed); err != nil {
					return nil, err
				}
			}
			c := base()
			c.noFTF = false // the isolated runs are keyed by category (sim.IsolatedRuns)
			pt, err := run(kind, share, c, conv)
			if err != nil {
				return nil, err
			}
			if share == 0 {
				adaptive = pt
			}
			out = append(out, pt)
		}
	}
	for i := range out {
		out[i].Normalised = out[i].AvgJCTH / adaptive.AvgJCTH
	}
	return out, nil
}

func sweepPoint(trace, sweep string, value float64, o outcome) SweepPoint {
	s := o.summary
	pt := SweepPoint{Trace: trace, Sweep: sweep, Value: value, Workloads: s.Workloads, Jobs: s.Jobs, Unfinished: s.Unfinished,
		AvgJCTH: s.AvgJCT / 3600, P99JCTH: s.P99JCT / 3600, MakespanH: s.Makespan / 3600,
		UnfairFraction: nan, WorstFTF: nan, Normalised: nan, WallS: o.wall.Seconds()}
	if o.hasFTF {
		pt.UnfairFraction, pt.WorstFTF = o.ftf.UnfairFraction, o.ftf.Worst
	}
	return pt
}

var nan = func() float64 { var z float64; return z / z }()

// writeSweeps prints the tables and writes the CSV files and figures.
func writeSweeps(sc *sweepConfig, fig10, fig11 []SweepPoint, stdout io.Writer) error {
	if len(fig10) > 0 {
		fmt.Fprintln(stdout, "Figure 10: sensitivity to p and the round length")
		writeSweepTable(stdout, fig10)
	}
	if len(fig11) > 0 {
		fmt.Fprintln(stdout, "Figure 11: share of strong-scaling (scale-gpus) or rigid jobs; norm = avg JCT / all-adaptive")
		writeSweepTable(stdout, fig11)
	}
	if sc.csvDir != "" {
		if err := os.MkdirAll(sc.csvDir, 0o755); err != nil {
			return err
		}
		for name, pts := range map[string][]SweepPoint{"fig10.csv": fig10, "fig11.csv": fig11} {
			if len(pts) == 0 {
				continue
			}
			if err := writeSweepCSV(filepath.Join(sc.csvDir, name), pts); err != nil {
				return err
			}
		}
	}
	if sc.out == "" {
		return nil
	}
	if err := os.MkdirAll(sc.out, 0o755); err != nil {
		return err
	}
	if len(fig10) > 0 {
		if err := writeFigure10(sc.out, fig10); err != nil {
			return err
		}
	}
	if len(fig11) > 0 {
		if err := writeFigure11(sc.out, fig11); err != nil {
			return err
		}
	}
	return nil
}

func writeSweepTable(w io.Writer, pts []SweepPoint) {
	fmt.Fprintf(w, "%-8s %-10s %7s %5s %6s %8s %8s %9s %7s %7s %6s %7s\n",
		"trace", "sweep", "value", "jobs", "unfin", "avgJCT_h", "p99JCT_h", "makespan", "unfair", "worstρ", "norm", "wall_s")
	for _, p := range pts {
		fmt.Fprintf(w, "%-8s %-10s %7g %5d %6d %8.3f %8.2f %9.2f %7s %7s %6s %7.1f\n",
			p.Trace, p.Sweep, p.Value, p.Jobs, p.Unfinished, p.AvgJCTH, p.P99JCTH, p.MakespanH,
			fmtOpt(100*p.UnfairFraction, "%.1f%%"), fmtOpt(p.WorstFTF, "%.2f"), fmtOpt(p.Normalised, "%.3f"), p.WallS)
	}
}

func fmtOpt(x float64, format string) string {
	if x != x {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

func writeSweepCSV(file string, pts []SweepPoint) error {
	return writeFile(file, func(f *os.File) error {
		w := csv.NewWriter(f)
		w.Write([]string{"trace", "sweep", "value", "workloads", "jobs", "unfinished", "avg_jct_h", "p99_jct_h", "makespan_h",
			"unfair_fraction", "worst_ftf", "normalised_avg_jct", "wall_s"})
		g := func(x float64) string {
			if x != x {
				return ""
			}
			return strconv.FormatFloat(x, 'g', 6, 64)
		}
		for _, p := range pts {
			w.Write([]string{p.Trace, p.Sweep, g(p.Value), strconv.Itoa(p.Workloads), strconv.Itoa(p.Jobs), strconv.Itoa(p.Unfinished),
				g(p.AvgJCTH), g(p.P99JCTH), g(p.MakespanH), g(p.UnfairFraction), g(p.WorstFTF), g(p.Normalised), g(p.WallS)})
		}
		w.Flush()
		return w.Error()
	})
}
