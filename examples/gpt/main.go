// Command gpt reproduces the left panel of the paper's §5.3 (hybrid-parallel
// jobs): the throughput of the 2.8B-parameter GPT job against its GPU count
// on each GPU type, from the measured profiles (profiles/gpt_pmp: 2 pipeline
// stages on the A100 nodes, 8 on the RTX nodes, 48 micro-batches of size 1
// per replica) and from the library's hybrid-parallel goodput model fitted to
// them by a bootstrap.Tracker. It prints a table and, with -plot DIR, writes
// gpt_scaling.png/.svg and gpt_scaling.csv (into -csv DIR if given).
//
//	go run ./examples/gpt -data ../shared/data/profiles -plot docs/figures/gpt -csv docs/data
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sia-sched/sia/examples/simulate/simcli"
)

func main() {
	data := flag.String("data", os.Getenv("SIA_DATA")+"/profiles", "profiles folder (with gpt_pmp)")
	plotDir := flag.String("plot", "", "folder for gpt_scaling.png and .svg")
	csvDir := flag.String("csv", "", "folder for gpt_scaling.csv (default: the -plot folder)")
	flag.Parse()
	if err := run(*data, *plotDir, *csvDir); err != nil {
		fmt.Fprintln(os.Stderr, "gpt:", err)
		os.Exit(2)
	}
}

func run(data, plotDir, csvDir string) error {
	pts, err := simcli.GPTScaling(data)
	if err != nil {
		return err
	}
	simcli.WriteGPTTable(os.Stdout, pts)
	if csvDir == "" {
		csvDir = plotDir
	}
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
