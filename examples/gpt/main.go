// Command gpt reproduces the paper's §5.3 (hybrid-parallel jobs).
//
// Left panel: the throughput of the 2.8B-parameter GPT job against its GPU
// count on each GPU type, from the measured profiles (profiles/gpt_pmp: 2
// pipeline stages on the A100 nodes, 8 on the RTX nodes, 48 micro-batches of
// size 1 per replica) and from the library's hybrid-parallel goodput model
// fitted to them by a bootstrap.Tracker. It prints a table and, with -plot
// DIR, writes gpt_scaling.png/.svg and gpt_scaling.csv (into -csv DIR if
// given).
//
// Right panel, with -workload FILE: the GPT job added to a trace (submitted
// at -submit seconds) and simulated under Sia on the -cluster with the
// trace ground truth; it prints the GPT job's allocation per -phase hours
// and, with -plot, writes gpt_allocation.png/.svg and gpt_allocation.csv.
//
//	go run ./examples/gpt -data ../shared/data/profiles -plot docs/figures/gpt -csv docs/data
//	go run ./examples/gpt -data ../shared/data/profiles -workload ../shared/data/workloads/saturn/workload-1.csv \
//	    -submit 0 -plot docs/figures/gpt -csv docs/data
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sia-sched/sia/examples/simulate/simcli"
	"github.com/sia-sched/sia/internal/numtext"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

func main() {
	data := flag.String("data", os.Getenv("SIA_DATA")+"/profiles", "profiles folder (with gpt_pmp)")
	plotDir := flag.String("plot", "", "folder for gpt_scaling (and gpt_allocation) .png and .svg")
	csvDir := flag.String("csv", "", "folder for the CSV files (default: the -plot folder)")
	workload := flag.String("workload", "", "workload CSV: simulate it with the GPT job added (the right panel)")
	cluster := flag.String("cluster", "heterogeneous", "cluster for -workload (heterogeneous|type:NxR,...)")
	submit := numtext.FloatFlag(flag.CommandLine, "submit", 0, "the GPT job's submission time in seconds (with -workload)")
	variant := flag.String("variant", "artifact", "Sia's variant: artifact (the published simulator's) or paper")
	phase := numtext.FloatFlag(flag.CommandLine, "phase", 1, "hours per row of the allocation table")
	flag.Parse()
	if err := checkFlags(*phase, *submit, *variant, *cluster, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gpt:", err)
		os.Exit(2)
	}
	if *csvDir == "" {
		*csvDir = *plotDir
	}
	var err error
	if *workload == "" {
		err = scaling(*data, *plotDir, *csvDir)
	} else {
		err = allocation(*data, *workload, *cluster, *variant, *submit, *phase, *plotDir, *csvDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpt:", err)
		os.Exit(2)
	}
}

// checkFlags rejects bad flag values before any work: a -phase that is
// not a finite number of hours in (0, 87600] (0 or NaN made the allocation
// table loop for ever), a -submit outside 0..sim.MaxSubmit, an unknown
// -variant or -cluster, and arguments after the flags.
func checkFlags(phase, submit float64, variant, cluster string, args []string) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected argument %q", args[0])
	case !(phase > 0 && phase <= 87600):
		return fmt.Errorf("-phase %v: want hours in (0, 87600]", phase)
	case !(submit >= 0 && submit <= sim.MaxSubmit):
		return fmt.Errorf("-submit %v: want seconds in 0..%d", submit, sim.MaxSubmit)
	case variant != "artifact" && variant != "paper":
		return fmt.Errorf("-variant %q: want artifact or paper", variant)
	}
	if _, err := sim.ParseCluster(cluster, 1); err != nil {
		return fmt.Errorf("-cluster: %w", err)
	}
	return nil
}

// scaling draws the left panel.
func scaling(data, plotDir, csvDir string) error {
	pts, err := simcli.GPTScaling(data)
	if err != nil {
		return err
	}
	simcli.WriteGPTTable(os.Stdout, pts)
	if csvDir != "" {
		if err := os.MkdirAll(csvDir, 0o755); err != nil {
			return err
		}
		if err := simcli.WriteGPTCSV(filepath.Join(csvDir, "gpt_scaling.csv"), pts); err != nil {
			return err
		}
	}
	if plotDir != "" {
		if err := os.MkdirAll(plotDir, 0o755); err != nil {
			return err
		}
		return simcli.WriteGPTScalingPlot(plotDir, pts)
	}
	return nil
}

// allocation draws the right panel.
func allocation(data, workload, cluster, variant string, submit, phase float64, plotDir, csvDir string) error {
	c, err := sim.ParseCluster(cluster, 1)
	if err != nil {
		return err
	}
	truth, err := sim.LoadTrace(data, c.Types())
	if err != nil {
		return err
	}
	wl, err := sim.LoadWorkload(workload)
	if err != nil {
		return err
	}
	var so *sia.Options
	switch variant {
	case "artifact":
		so = &sia.Options{Artifact: sia.PublishedArtifact()}
	case "paper":
		so = &sia.Options{}
	default:
		return fmt.Errorf("-variant %q, want artifact or paper", variant)
	}
	t, err := simcli.RunGPTTrace(context.Background(), c, truth, wl, submit, so)
	if err != nil {
		return err
	}
	j := t.Job
	fmt.Printf("%s, %s, cluster %s: GPT job submitted %.0f s, started %.0f s, finished %.0f s (JCT %.2f h), %d restarts, %.1f GPU-h\n",
		t.Workload, t.Policy, c, j.Submit, j.Start, j.Completion, j.JCT/3600, j.Restarts, j.GPUHours())
	fmt.Printf("all %d jobs: avg JCT %.3f h, p99 %.2f h, makespan %.2f h, unfinished %d\n\n",
		t.Summary.Jobs, t.Summary.AvgJCT/3600, t.Summary.P99JCT/3600, t.Summary.Makespan/3600, t.Summary.Unfinished)
	simcli.WriteGPTPhases(os.Stdout, t, t.Phases(phase))
	if csvDir != "" {
		if err := os.MkdirAll(csvDir, 0o755); err != nil {
			return err
		}
		if err := simcli.WriteGPTAllocCSV(filepath.Join(csvDir, "gpt_allocation.csv"), t); err != nil {
			return err
		}
	}
	if plotDir != "" {
		if err := os.MkdirAll(plotDir, 0o755); err != nil {
			return err
		}
		return simcli.WriteGPTAllocPlot(plotDir, t)
	}
	return nil
}
