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
	"github.com/sia-sched/sia/internal/testdata"
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
	if *starts < 0 {
		fmt.Fprintf(stderr, "fit: -starts %d: want >= 0\n", *starts)
		return 2
	}
	dir := *data
	if dir == "" {
		shared, err := testdata.Locate()
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
			skipped = append(skipped, m.Name)
			continue
		}
		for _, tp := range m.Types {
			profiles = append(profiles, profile{m.Name, tp.Type, tp.Observations()})
		}
	}
	if len(profiles) == 0 {
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
			return fmt.Errorf("%s/%s: %w", p.model, p.typ, err)
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
		for _, o := range p.obs {
			if o.Nodes == 1 {
				train = append(train, o)
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
			return fmt.Errorf("%s/%s single-node rows: %w", p.model, p.typ, err)
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
		fmt.Fprintf(w, "skipped %s (hybrid-parallel profile format)\n", s)
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
