package simcli

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writePlots draws the JCT CDF per policy, the GPUs in use per type over time
// (first workload, one figure per policy) and, when several scales were run,
// the policy runtime against cluster size.
func writePlots(dir string, os []outcome) error {
	if err := writeSummaryCSV(dir, os); err != nil {
		return err
	}
	if err := writeJCTBars(dir, os); err != nil {
		return err
	}
	series := make([]Series, len(os))
	for i, o := range os {
		series[i] = Series{Name: o.policy, JCTs: o.summary.JCTs}
	}
	var rhos []Series
	for _, o := range os {
		if len(o.rhos) > 0 {
			rhos = append(rhos, Series{Name: o.policy, JCTs: o.rhos})
		}
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := WriteJCTCDF(filepath.Join(dir, "jct_cdf"+ext), series...); err != nil {
			return err
		}
		if len(rhos) > 0 {
			if err := WriteFTFCDF(filepath.Join(dir, "ftf_cdf"+ext), rhos...); err != nil {
				return err
			}
		}
	}
	if err := writeRhosCSV(dir, os); err != nil {
		return err
	}
	for _, o := range os {
		if len(o.results) == 0 {
			continue
		}
		r := o.results[0]
		types := map[string]bool{}
		for _, rs := range r.Rounds {
			for t := range rs.GPUsByTyp {
				types[t] = true
			}
		}
		var names []string
		for t := range types {
			names = append(names, t)
		}
		sort.Strings(names)
		q := newPlot(fmt.Sprintf("GPUs in use per type: %s, %s", o.policy, r.Workload), "time (h)", "GPUs allocated")
		for i, t := range names {
			pts := make(plotter.XYs, len(r.Rounds))
			for k, rs := range r.Rounds {
				pts[k].X = rs.Now / 3600
				pts[k].Y = float64(rs.GPUsByTyp[t])
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(i)
			q.Add(l)
			q.Legend.Add(t, l)
		}
		q.Legend.Top = true
		if err := savePlot(q, 7*vg.Inch, 3.5*vg.Inch, dir, fmt.Sprintf("gpus_%s", sanitize(o.policy))); err != nil {
			return err
		}
	}
	byPolicy := map[string][]outcome{}
	var order []string
	for _, o := range os {
		base := o.policy
		for i := range base {
			if base[i] == '@' {
				base = base[:i]
				break
			}
		}
		if _, ok := byPolicy[base]; !ok {
			order = append(order, base)
		}
		byPolicy[base] = append(byPolicy[base], o)
	}
	multi := false
	for _, v := range byPolicy {
		multi = multi || len(v) > 1
	}
	if !multi {
		return nil
	}
	return writeScalePlots(dir, order, scalePoints(order, byPolicy))
}

// Series is one curve of a JCT CDF: a name and JCTs in seconds.
type Series struct {
	Name string
	JCTs []float64
}

// WriteJCTCDF draws the CDF of each series' JCTs (hours, log scale) into a
// PNG or SVG file (by the extension), as examples/simulate's jct_cdf.png. Empty series are skipped.
func WriteJCTCDF(file string, series ...Series) error {
	p := newPlot("JCT CDF", "JCT (h)", "fraction of jobs")
	logAxis(&p.X)
	for i, sr := range series {
		jcts := slices.Sorted(slices.Values(sr.JCTs))
		if len(jcts) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(jcts))
		for k, v := range jcts {
			pts[k].X = maxf(v/3600, 1e-3)
			pts[k].Y = float64(k+1) / float64(len(jcts))
		}
		if err := addSeriesLine(p, i, sr.Name, pts); err != nil {
			return err
		}
	}
	p.Legend.Top = false
	p.Legend.Left = false
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}

// WriteFTFCDF draws the CDF of each series' finish-time-fairness ratios ρ
// (in the JCTs field; linear axis, a line at ρ = 1) into a PNG or SVG file,
// as the left panel of the paper's Figure 8. Empty series are skipped.
func WriteFTFCDF(file string, series ...Series) error {
	p := newPlot("Finish-time fairness CDF", "ρ (shared JCT / fair JCT)", "fraction of jobs")
	hi := 1.0
	for i, sr := range series {
		rs := slices.Sorted(slices.Values(sr.JCTs))
		if len(rs) == 0 {
			continue
		}
		hi = maxf(hi, rs[len(rs)-1])
		pts := make(plotter.XYs, len(rs))
		for k, v := range rs {
			pts[k].X = v
			pts[k].Y = float64(k+1) / float64(len(rs))
		}
		if err := addSeriesLine(p, i, sr.Name, pts); err != nil {
			return err
		}
	}
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return err
	}
	one.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(one)
	p.X.Min, p.X.Max = 0, hi*1.02
	p.Legend.Top = false
	p.Legend.Left = false
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// newPlot returns a plot with its title and axis labels set.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	return p
}

// logAxis makes an axis logarithmic with plain tick labels.
func logAxis(a *plot.Axis) {
	a.Scale = logScale{}
	a.Tick.Marker = logTicks{plot.LogTicks{Prec: -1}}
}

// logScale and logTicks are gonum's log scale and ticks on a range made
// positive first (positiveRange): gonum widens the range of data holding one
// value by ±1, which for a value below 1 reaches below 0, where its log
// scale panics.
type (
	logScale struct{}
	logTicks struct{ plot.LogTicks }
)

// Normalize implements plot.Normalizer.
func (logScale) Normalize(min, max, x float64) float64 {
	min, max = positiveRange(min, max)
	return plot.LogScale{}.Normalize(min, max, math.Max(x, min))
}

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(min, max float64) []plot.Tick {
	min, max = positiveRange(min, max)
	return t.LogTicks.Ticks(min, max)
}

// positiveRange returns a range of positive numbers for a log axis: min
// raised to max/1000 when it is not positive, and (1e-3, 1) when max is not.
func positiveRange(min, max float64) (float64, float64) {
	if !(max > 0) || math.IsInf(max, 0) {
		return 1e-3, 1
	}
	if !(min > 0) {
		min = max / 1000
	}
	if min >= max {
		min, max = min/2, max*2
	}
	return min, max
}

// addSeriesLine adds the i-th series' line, in the i-th colour and dash
// pattern, with its legend entry.
func addSeriesLine(p *plot.Plot, i int, name string, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
