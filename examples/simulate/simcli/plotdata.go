package simcli

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// policyQuantile returns the q-quantile (nearest rank) of the policy's wall
// time per round over every workload of an outcome, in milliseconds.
func policyQuantile(o outcome, q float64) float64 {
	var ts []time.Duration
	for _, r := range o.results {
		ts = append(ts, r.PolicyTimes...)
	}
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	i := min(max(int(math.Ceil(q*float64(len(ts))))-1, 0), len(ts)-1)
	return float64(ts[i]) / 1e6
}

// writeRhosCSV writes rhos.csv: every finished job's ρ per policy, the
// data of the FTF CDF (per-job JCTs are -jobs-csv's).
func writeRhosCSV(dir string, os_ []outcome) error {
	g, err := os.Create(filepath.Join(dir, "rhos.csv"))
	if err != nil {
		return err
	}
	fmt.Fprintln(g, "policy,scale,rho")
	for _, o := range os_ {
		for _, v := range o.rhos {
			fmt.Fprintf(g, "%s,%d,%.4f\n", o.policy, o.scale, v)
		}
	}
	return g.Close()
}

// summaryHeader are the columns of summary.csv.
var summaryHeader = []string{"policy", "scale", "gpus", "workloads", "jobs", "unfinished", "avg_jct_h", "p99_jct_h",
	"makespan_h", "gpu_hours_per_job", "restarts_per_job", "worst_ftf", "unfair_fraction",
	"policy_ms_p25", "policy_ms_median", "policy_ms_p75", "policy_ms_p95", "rounds", "sim_wall_s"}

// writeSummaryCSV writes one row per outcome (the numbers of the printed
// table plus the policy-time quartiles) to summary.csv, for re-plotting.
func writeSummaryCSV(dir string, os_ []outcome) error {
	f, err := os.Create(filepath.Join(dir, "summary.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(summaryHeader)
	g := func(x float64) string { return strconv.FormatFloat(round4(x), 'f', -1, 64) }
	for _, o := range os_ {
		s := o.summary
		rounds := 0
		for _, r := range o.results {
			rounds += len(r.PolicyTimes)
		}
		wf, uf := "", ""
		if o.hasFTF {
			wf, uf = g(o.ftf.Worst), g(o.ftf.UnfairFraction)
		}
		_ = w.Write([]string{o.policy, strconv.Itoa(o.scale), strconv.Itoa(o.gpus), strconv.Itoa(s.Workloads),
			strconv.Itoa(s.Jobs), strconv.Itoa(s.Unfinished), g(s.AvgJCT / 3600), g(s.P99JCT / 3600), g(s.Makespan / 3600),
			g(s.GPUHoursPerJob), g(s.RestartsPerJob), wf, uf,
			g(policyQuantile(o, 0.25)), g(policyQuantile(o, 0.5)), g(policyQuantile(o, 0.75)), g(policyQuantile(o, 0.95)),
			strconv.Itoa(rounds), g(o.wall.Seconds())})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// savePlot saves p as name.png and name.svg.
func savePlot(p *plot.Plot, w, h vg.Length, dir, name string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(w, h, filepath.Join(dir, name+ext)); err != nil {
			return err
		}
	}
	return nil
}

// writeJCTBars draws the average JCT of every outcome as bars (the layout of
// the paper's Tables 3 and 4 read as a chart), with the p99 JCT printed in
// the legend.
func writeJCTBars(dir string, os_ []outcome) error {
	if len(os_) == 0 {
		return nil
	}
	p := newPlot("Average JCT per policy", "", "avg JCT (h)")
	vals := make(plotter.Values, len(os_))
	names := make([]string, len(os_))
	for i, o := range os_ {
		vals[i] = o.summary.AvgJCT / 3600
		names[i] = o.policy
	}
	b, err := plotter.NewBarChart(vals, vg.Points(18))
	if err != nil {
		return err
	}
	b.Color = plotutil.Color(0)
	p.Add(b, plotter.NewGrid())
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = -0.8
	w := vg.Length(max(4, 0.6*float64(len(os_)))) * vg.Inch
	return savePlot(p, w, 4*vg.Inch, dir, "avg_jct")
}

// scalePoint is one policy at one cluster size in Figure 9.
type scalePoint struct {
	gpus             int
	p25, median, p75 float64 // ms per round
	avgJCTH          float64
}

// scalePoints returns Figure 9's points of outcomes grouped by policy.
func scalePoints(order []string, byPolicy map[string][]outcome) map[string][]scalePoint {
	out := map[string][]scalePoint{}
	for _, name := range order {
		for _, o := range byPolicy[name] {
			out[name] = append(out[name], scalePoint{gpus: o.gpus, p25: policyQuantile(o, 0.25), median: policyQuantile(o, 0.5),
				p75: policyQuantile(o, 0.75), avgJCTH: o.summary.AvgJCT / 3600})
		}
	}
	return out
}

// writeScalePlots draws Figure 9 of the paper: the policy's wall time per
// round (median, with p25–p75 bars) against cluster size, and the average
// JCT against cluster size.
func writeScalePlots(dir string, order []string, points map[string][]scalePoint) error {
	q := newPlot("Policy runtime per round vs cluster size", "GPUs", "ms per round (median, p25-p75)")
	logAxis(&q.X)
	logAxis(&q.Y)
	j := newPlot("Average JCT vs cluster size", "GPUs", "avg JCT (h)")
	logAxis(&j.X)
	for i, name := range order {
		var pts, jpts plotter.XYs
		var errs plotter.YErrors
		sorted := slices.Clone(points[name])
		slices.SortStableFunc(sorted, func(a, b scalePoint) int { return a.gpus - b.gpus })
		for _, sp := range sorted {
			med := maxf(sp.median, 1e-3)
			lo, hi := maxf(sp.p25, 1e-3), maxf(sp.p75, 1e-3)
			pts = append(pts, plotter.XY{X: float64(sp.gpus), Y: med})
			errs = append(errs, struct{ Low, High float64 }{med - lo, hi - med})
			jpts = append(jpts, plotter.XY{X: float64(sp.gpus), Y: sp.avgJCTH})
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return err
		}
		eb.Color = plotutil.Color(i)
		q.Add(l, s, eb)
		q.Legend.Add(name, l)
		jl, js, err := plotter.NewLinePoints(jpts)
		if err != nil {
			return err
		}
		jl.Color, js.Color = plotutil.Color(i), plotutil.Color(i)
		j.Add(jl, js)
		j.Legend.Add(name, jl)
	}
	q.Legend.Top, q.Legend.Left = true, true
	q.Add(plotter.NewGrid())
	j.Legend.Top = true
	j.Add(plotter.NewGrid())
	if err := savePlot(q, 6*vg.Inch, 4*vg.Inch, dir, "policy_runtime"); err != nil {
		return fmt.Errorf("policy runtime: %w", err)
	}
	return savePlot(j, 6*vg.Inch, 4*vg.Inch, dir, "jct_vs_scale")
}
