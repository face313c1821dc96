package simcli

import (
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// sweepMetric is one panel of Figure 10.
type sweepMetric struct {
	label string
	value func(SweepPoint) float64
}

var figure10Metrics = []sweepMetric{
	{"avg JCT (h)", func(p SweepPoint) float64 { return p.AvgJCTH }},
	{"p99 JCT (h)", func(p SweepPoint) float64 { return p.P99JCTH }},
	{"makespan (h)", func(p SweepPoint) float64 { return p.MakespanH }},
	{"unfair jobs (%, ρ > 1)", func(p SweepPoint) float64 { return 100 * p.UnfairFraction }},
}

// writeFigure10 draws the paper's Figure 10 layout: one row per swept knob
// (p, round length), one panel per metric, one line per trace.
func writeFigure10(dir string, pts []SweepPoint) error {
	rows := []struct{ sweep, x string }{{"p", "fairness exponent p"}, {"round", "round length (s)"}}
	grid := make([][]*plot.Plot, len(rows))
	for i, row := range rows {
		for _, m := range figure10Metrics {
			p := newPlot("", row.x, m.label)
			if row.sweep == "round" {
				logAxis(&p.X)
			}
			if err := addTraceLines(p, pts, row.sweep, m.value); err != nil {
				return err
			}
			grid[i] = append(grid[i], p)
		}
	}
	return saveGrid(grid, 16*vg.Inch, 7*vg.Inch, dir, "fig10")
}

// writeFigure11 draws Figure 11: average JCT normalised to all-adaptive
// against the share of converted jobs, one panel per job kind.
func writeFigure11(dir string, pts []SweepPoint) error {
	var row []*plot.Plot
	for _, k := range []struct{ kind, title string }{{"scale-gpus", "strong-scaling jobs"}, {"rigid", "rigid jobs"}} {
		p := newPlot(k.title, "share of jobs (%)", "avg JCT / all-adaptive")
		var sub []SweepPoint
		for _, pt := range pts {
			if pt.Sweep == k.kind {
				pt.Value *= 100
				sub = append(sub, pt)
			}
		}
		if err := addTraceLines(p, sub, k.kind, func(p SweepPoint) float64 { return p.Normalised }); err != nil {
			return err
		}
		row = append(row, p)
	}
	return saveGrid([][]*plot.Plot{row}, 10*vg.Inch, 4*vg.Inch, dir, "fig11")
}

// addTraceLines adds one line per trace of the points of one sweep.
func addTraceLines(p *plot.Plot, pts []SweepPoint, sweep string, value func(SweepPoint) float64) error {
	var traces []string
	byTrace := map[string]plotter.XYs{}
	for _, pt := range pts {
		if pt.Sweep != sweep {
			continue
		}
		if _, ok := byTrace[pt.Trace]; !ok {
			traces = append(traces, pt.Trace)
		}
		if y := value(pt); y == y {
			byTrace[pt.Trace] = append(byTrace[pt.Trace], plotter.XY{X: pt.Value, Y: y})
		}
	}
	for i, tr := range traces {
		if len(byTrace[tr]) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(byTrace[tr])
		if err != nil {
			return err
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		p.Add(l, s)
		p.Legend.Add(tr, l, s)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return nil
}

// saveGrid draws a grid of plots into name.png and name.svg.
func saveGrid(grid [][]*plot.Plot, w, h vg.Length, dir, name string) error {
	tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	png := vgimg.New(w, h)
	svg := vgsvg.New(w, h)
	for _, c := range []vg.CanvasSizer{png, svg} {
		dc := draw.New(c)
		canvases := plot.Align(grid, tiles, dc)
		for i := range grid {
			for j := range grid[i] {
				grid[i][j].Draw(canvases[i][j])
			}
		}
	}
	if err := writeFile(filepath.Join(dir, name+".png"), func(f *os.File) error {
		_, err := vgimg.PngCanvas{Canvas: png}.WriteTo(f)
		return err
	}); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, name+".svg"), func(f *os.File) error {
		_, err := svg.WriteTo(f)
		return err
	})
}
