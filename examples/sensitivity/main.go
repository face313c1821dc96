// Command sensitivity runs the sensitivity study of the paper's §5.7 with
// examples/simulate's policies and ground truths: Figure 10 (Sia's fairness
// exponent p and the round length) and Figure 11 (a share of the jobs made
// strong-scaling or rigid), one simulation at a time. It prints a table per
// figure and, with -plot DIR, writes fig10/fig11 as PNG and SVG and their
// data as fig10.csv and fig11.csv (into -csv DIR if given).
//
//	go run ./examples/sensitivity -data ../shared/data/profiles \
//	    -traces philly=../shared/data/workloads/philly,saturn=../shared/data/workloads/saturn \
//	    -workloads 3 -plot docs/figures/sensitivity -csv docs/data
//
// Flags: -figures 10,11; -traces NAME=PATH,...; -data DIR (default: the
// built-in model); -cluster SPEC; -policy NAME (default sia); -variant paper
// (default) or artifact; -workloads N (first N of each folder); -seed N
// (which jobs Figure 11 converts); -plot DIR; -csv DIR. See go doc
// ./examples/simulate/simcli (Sweep, ConvertKinds).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sia-sched/sia/examples/simulate/simcli"
)

func main() {
	if err := simcli.Default.Sweep(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "sensitivity:", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(2)
	}
}
