// Command ilp-hardrun solves Sia-shaped instances over many seeds and reports,
// per instance, the status, CPU and wall time and branch-and-bound nodes,
// then the median and maximum per class. It is the measuring driver for the
// solver's hard class (2048 GPUs, hundreds of jobs):
//
//	go run ./examples/ilp-hardrun -scales 8,32 -jobs 100,300,1500 -powers -0.5,0.5 -seeds 20 -seed 7000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/numtext"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ints(s string) []int {
	var r []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintln(os.Stderr, "hardrun:", err)
			os.Exit(2)
		}
		r = append(r, v)
	}
	return r
}

func main() {
	scales := flag.String("scales", "32", "cluster scales")
	jobs := flag.String("jobs", "300", "job counts")
	powers := flag.String("powers", "-0.5,0.5", "fairness exponents")
	seeds := flag.Int("seeds", 10, "instances per class")
	seed0 := flag.Uint64("seed", 7000, "first seed")
	pins := numtext.FloatFlag(flag.CommandLine, "pins", 0.05, "pinned fraction")
	timeout := flag.Duration("timeout", 10*time.Second, "per-solve limit")
	verbose := flag.Bool("v", false, "one line per instance")
	flag.Parse()
	var ps []float64
	for _, f := range strings.Split(*powers, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err == nil {
			err = numtext.Check(strings.TrimSpace(f))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "hardrun: -powers:", err)
			os.Exit(2)
		}
		ps = append(ps, v)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hardrun: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *seeds < 1 || *seeds > 10000 {
		fmt.Fprintf(os.Stderr, "hardrun: -seeds %d: want 1..10000\n", *seeds)
		os.Exit(2)
	}
	if *timeout <= 0 {
		fmt.Fprintf(os.Stderr, "hardrun: -timeout %v: want a positive duration\n", *timeout)
		os.Exit(2)
	}
	for _, sc := range ints(*scales) {
		for _, nj := range ints(*jobs) {
			for _, pw := range ps {
				if err := (ilptest.Config{Scale: sc, Jobs: nj, Power: pw, PinFrac: *pins}).Validate(); err != nil {
					fmt.Fprintf(os.Stderr, "hardrun: -scales %q -jobs %q -powers %q -pins %v: %v\n", *scales, *jobs, *powers, *pins, err)
					os.Exit(2)
				}
			}
		}
	}
	fmt.Printf("%-22s %5s %8s %8s %8s %8s %8s %8s\n", "class", "opt", "cpu-med", "cpu-max", "wall-med", "wall-max", "nodes-med", "nodes-max")
	for _, sc := range ints(*scales) {
		for _, nj := range ints(*jobs) {
			for _, pw := range ps {
				var cpus, walls []float64
				var nodes []int
				opt := 0
				for s := 0; s < *seeds; s++ {
					c := ilptest.Config{Scale: sc, Jobs: nj, Power: pw, PinFrac: *pins, Seed: *seed0 + uint64(s)}
					p := ilptest.Generate(c)
					if pw < 0 {
						p.Grid = 0.01
					}
					ctx, cancel := context.WithTimeout(context.Background(), *timeout)
					c0, w0 := cpuNow(), time.Now()
					sol, err := ilp.Solve(ctx, p, nil)
					cpu, wall := cpuNow()-c0, time.Since(w0)
					cancel()
					if err != nil {
						fmt.Fprintln(os.Stderr, "hardrun:", err)
						os.Exit(1)
					}
					if sol.Status == ilp.Optimal {
						opt++
					}
					cpus = append(cpus, cpu.Seconds()*1000)
					walls = append(walls, wall.Seconds()*1000)
					nodes = append(nodes, sol.Nodes)
					if *verbose {
						fmt.Printf("  g%d-j%d-p%g-s%d %v obj %.6f gap %.3g cpu %.1fms wall %.1fms nodes %d\n", 64*sc, nj, pw, c.Seed, sol.Status, sol.Objective, sol.Gap(), cpu.Seconds()*1000, wall.Seconds()*1000, sol.Nodes)
					}
				}
				sort.Float64s(cpus)
				sort.Float64s(walls)
				sort.Ints(nodes)
				n := len(cpus)
				fmt.Printf("%-22s %2d/%-2d %8.1f %8.1f %8.1f %8.1f %8d %8d\n", fmt.Sprintf("g%d-j%d-p%g", 64*sc, nj, pw), opt, n,
					cpus[n/2], cpus[n-1], walls[n/2], walls[n-1], nodes[n/2], nodes[n-1])
			}
		}
	}
}
