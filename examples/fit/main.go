// Command fit fits the seven-parameter throughput model to every measured
// profile and reports how well the fitted models predict the measured step
// times.
//
// Usage:
//
//	go run ./examples/fit [-data DIR] [-starts N]
//
// DIR holds one folder per model with placements-<type>.csv,
// scalability-<type>.csv and validation-<bsz>.csv files (default: the
// shared data's profiles folder). For each (model, GPU type) one model is
// fitted from all placement and scalability rows; the first table gives the
// median and 90th-percentile relative error |predicted − measured| / measured
// of the step time, where the prediction for a row (nodes, replicas, b) is the
// optimizer-step time T_sync without accumulation. The second table fits only
// the single-node rows and predicts the multi-node rows, the extrapolation
// bootstrapping relies on. Percentiles are nearest-rank on the sorted errors
// (element ⌊q·n⌋). The hybrid-parallel gpt_pmp profiles record per-micro-batch
// times in a different format and are skipped. The last line reads
//
//	overall: N fits, median relative error X.X%, p90 Y.Y%
//
// pooled over all observations of the first table.
//
// Bad input: a missing or unreadable folder, a malformed file (binary
// garbage, missing columns, zero or negative counts, negative or non-numeric
// times), a scalability file without its placements file, a placements file
// with a header but no rows, a row whose sync time is not below its step
// time, and bad flags each end the run with a one-line message on stderr
// naming the file and line (or data row) and a non-zero status (2 for flags,
// 1 otherwise). Valid edge cases succeed: a model folder without
// placements-<type>.csv files is listed as skipped, a profile with a single
// row is fitted (with the parameters it cannot identify pinned), and a
// profile without multi-node rows shows "-" in the second table. A folder
// with no profile at all is an error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/shareddata"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its inputs and outputs made explicit; it returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fit", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	data := fl.String("data", "", "profiles folder (default: the shared data's profiles)")
	starts := fl.Int("starts", 0, "starting points per fit (0 = goodput.DefaultStarts)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: fit [-data DIR] [-starts N]")
			fl.SetOutput(stdout)
			fl.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "fit: %v (usage: fit [-data DIR] [-starts N])\n", err)
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "fit: unexpected argument %q (usage: fit [-data DIR] [-starts N])\n", fl.Arg(0))
		return 2
	}
	if *starts < 0 || *starts > goodput.MaxStarts {
		fmt.Fprintf(stderr, "fit: -starts %d: want a value in [0, %d]\n", *starts, goodput.MaxStarts)
		return 2
	}
	dir := *data
	if dir == "" {
		shared, err := shareddata.Locate()
		if err != nil {
			fmt.Fprintf(stderr, "fit: no -data given and %v\n", err)
			return 1
		}
		dir = filepath.Join(shared, "profiles")
	}
	if err := report(dir, *starts, stdout); err != nil {
		fmt.Fprintf(stderr, "fit: %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	return 0
}

// profile is one (model, type) pair to fit.
type profile struct {
	model, typ string
	obs        []goodput.Observation
	// files[i] names the file and data row that obs[i] comes from.
	files []string
}

// where names the file and data row of observation i of p for error
// messages ("bert/placements-aws.csv data row 3"; data rows are counted
// from 1 after the header).
func (p profile) where(i int) string {
	if i < 0 || i >= len(p.files) {
		return p.model + "/" + p.typ
	}
	return p.files[i]
}

// fitError rewrites a goodput.Fit error so that it names the offending file
// and row.
func (p profile) fitError(what string, idx []int, err error) error {
	var oe *goodput.ObservationError
	if errors.As(err, &oe) && oe.Index >= 0 && oe.Index < len(idx) {
		return fmt.Errorf("%s: %s: %s", p.where(idx[oe.Index]), oe.Field, oe.Reason)
	}
	return fmt.Errorf("%s/%s%s: %w", p.model, p.typ, what, err)
}

func newProfile(dir, model string, tp bootstrap.TypeProfile) (profile, error) {
	p := profile{model: model, typ: tp.Type, obs: tp.Observations()}
	pf := filepath.Join(dir, model, "placements-"+tp.Type+".csv")
	if len(tp.Placements) == 0 {
		return p, fmt.Errorf("%s: no data rows (header only)", pf)
	}
	for i := range tp.Placements {
		p.files = append(p.files, fmt.Sprintf("%s data row %d", pf, i+1))
	}
	sf := filepath.Join(dir, model, "scalability-"+tp.Type+".csv")
	for i := range tp.Scalability {
		p.files = append(p.files, fmt.Sprintf("%s data row %d", sf, i+1))
	}
	return p, nil
}

func report(dir string, starts int, w io.Writer) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	models, err := bootstrap.ReadProfilesDir(dir)
	if err != nil {
		return err
	}
	var profiles []profile
	var skipped []string
	for _, m := range models {
		if m.Name == "gpt_pmp" {
			skipped = append(skipped, m.Name+" (hybrid-parallel profile format)")
			continue
		}
		if len(m.Types) == 0 {
			skipped = append(skipped, m.Name+" (no placements-<type>.csv)")
			continue
		}
		for _, tp := range m.Types {
			p, err := newProfile(dir, m.Name, tp)
			if err != nil {
				return err
			}
			profiles = append(profiles, p)
		}
	}
	if len(profiles) == 0 {
		if own, _ := filepath.Glob(filepath.Join(dir, "placements-*.csv")); len(own) > 0 {
			return fmt.Errorf("%s: no model folders with placements-<type>.csv files (this looks like one model's folder: pass its parent)", dir)
		}
		return fmt.Errorf("%s: no placements-<type>.csv files found in any model folder", dir)
	}
	opts := &goodput.FitOptions{Starts: starts}

	fmt.Fprintln(w, "Fit on all rows (placements + scalability), predict every row:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\ttype\tobservations\tmedian\tp90\tgamma\t")
	var pooled []float64
	for _, p := range profiles {
		params, err := goodput.Fit(p.obs, opts)
		if err != nil {
			all := make([]int, len(p.obs))
			for i := range all {
				all[i] = i
			}
			return p.fitError("", all, err)
		}
		errs := relErrors(params, p.obs)
		pooled = append(pooled, errs...)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%.1f%%\t%.2f\t\n", p.model, p.typ, len(p.obs), 100*quantile(errs, 0.5), 100*quantile(errs, 0.9), params.Gamma)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Fit on single-node rows, predict the multi-node rows:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\ttype\ttrain\ttest\tmedian\tp90\t")
	var extrap []float64
	extrapFits := 0
	for _, p := range profiles {
		var train, test []goodput.Observation
		var trainIdx []int
		for i, o := range p.obs {
			if o.Nodes == 1 {
				train = append(train, o)
				trainIdx = append(trainIdx, i)
			} else {
				test = append(test, o)
			}
		}
		if len(train) == 0 || len(test) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t-\t-\t\n", p.model, p.typ, len(train), len(test))
			continue
		}
		params, err := goodput.Fit(train, opts)
		if err != nil {
			return p.fitError(" single-node rows", trainIdx, err)
		}
		extrapFits++
		errs := relErrors(params, test)
		extrap = append(extrap, errs...)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f%%\t%.1f%%\t\n", p.model, p.typ, len(train), len(test), 100*quantile(errs, 0.5), 100*quantile(errs, 0.9))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(extrap) > 0 {
		fmt.Fprintf(w, "single-node to multi-node: %d fits, median relative error %.1f%%, p90 %.1f%%\n",
			extrapFits, 100*quantile(extrap, 0.5), 100*quantile(extrap, 0.9))
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "skipped %s\n", s)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "overall: %d fits, median relative error %.1f%%, p90 %.1f%%\n",
		len(profiles), 100*quantile(pooled, 0.5), 100*quantile(pooled, 0.9))
	return nil
}

// relErrors returns |T_sync − step| / step for each observation.
func relErrors(p goodput.Params, obs []goodput.Observation) []float64 {
	out := make([]float64, len(obs))
	for i, o := range obs {
		pred := p.SyncTime(o.Nodes, o.Replicas, float64(o.LocalBatch))
		out[i] = math.Abs(pred-o.StepTime) / o.StepTime
	}
	return out
}

// quantile returns the nearest-rank quantile: element ⌊q·n⌋ of the sorted
// values (capped at the last).
func quantile(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(q * float64(len(s)))
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}
