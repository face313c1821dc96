package simcli

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/sia-sched/sia/internal/csvtext"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// replot draws Figure 9 (policy runtime and average JCT against cluster
// size) and the average-JCT bars from summary.csv files written by earlier
// -plot runs, so that runs made separately (one scale or policy each) end up
// in one figure. Rows are grouped by policy name without its "@xK" suffix.
func replot(files []string, dir string) error {
	var order []string
	points := map[string][]scalePoint{}
	var names []string
	var jcts plotter.Values
	for _, f := range files {
		rows, err := readSummaryCSV(f)
		if err != nil {
			return err
		}
		for _, r := range rows {
			base, _, _ := strings.Cut(r.policy, "@")
			if _, ok := points[base]; !ok {
				order = append(order, base)
			}
			points[base] = append(points[base], r.point)
			names = append(names, r.policy)
			jcts = append(jcts, r.point.avgJCTH)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("-replot: no rows in %s", strings.Join(files, ", "))
	}
	if err := writeScalePlots(dir, order, points); err != nil {
		return err
	}
	p := newPlot("Average JCT per policy", "", "avg JCT (h)")
	b, err := plotter.NewBarChart(jcts, vg.Points(18))
	if err != nil {
		return err
	}
	b.Color = plotutil.Color(0)
	p.Add(b, plotter.NewGrid())
	p.NominalX(names...)
	w := vg.Length(max(4, 0.6*float64(len(names)))) * vg.Inch
	return savePlot(p, w, 4*vg.Inch, dir, "avg_jct")
}

type summaryRow struct {
	policy string
	point  scalePoint
}

// maxReplotGPUs bounds the gpus column of a summary.csv: far above any
// simulated cluster, so that the count converts to int exactly.
const maxReplotGPUs = 1 << 30

// readSummaryCSV reads a summary.csv; errors name the file, line and column.
// Its numbers are finite and non-negative, and gpus a count in
// 1..maxReplotGPUs.
func readSummaryCSV(path string) ([]summaryRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-replot: %w", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("-replot: %s: %w", path, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], summaryHeader) {
		return nil, fmt.Errorf("-replot: %s:1: header is not that of a summary.csv written by -plot", path)
	}
	col := map[string]int{}
	for i, h := range summaryHeader {
		col[h] = i
	}
	var out []summaryRow
	for i, r := range recs[1:] {
		num := func(name string) (float64, error) {
			v, err := csvtext.ParseFloat(r[col[name]])
			if err != nil || !(v >= 0 && v <= math.MaxFloat64) {
				return 0, fmt.Errorf("-replot: %s:%d: column %s: %q is not a finite number >= 0", path, i+2, name, r[col[name]])
			}
			if name == "gpus" && (v < 1 || v > maxReplotGPUs || v != math.Trunc(v)) {
				return 0, fmt.Errorf("-replot: %s:%d: column gpus: %q is not a GPU count in 1..%d", path, i+2, r[col[name]], maxReplotGPUs)
			}
			return v, nil
		}
		var vals [5]float64
		for k, name := range []string{"gpus", "policy_ms_p25", "policy_ms_median", "policy_ms_p75", "avg_jct_h"} {
			if vals[k], err = num(name); err != nil {
				return nil, err
			}
		}
		out = append(out, summaryRow{policy: r[0], point: scalePoint{gpus: int(vals[0]), p25: vals[1], median: vals[2], p75: vals[3], avgJCTH: vals[4]}})
	}
	return out, nil
}
