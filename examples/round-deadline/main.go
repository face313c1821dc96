// Command round-deadline measures sia's Round deadline contract on a
// corpus of large fleets (1,000 to 5,000 jobs, 2,000 to 16,000 GPUs, 3 to
// 8 GPU types, nodes of 4 to 16 GPUs with 6-, 10- and 12-GPU nodes among
// them, several sizes per type; see fleet.go): per deadline D, the
// overshoot past D (p50, p99, max over every round; a round that returns
// before D counts 0), the CPU time the round's thread spent past D (p50,
// max: on a shared machine it says how much of the overshoot is the
// round's own work rather than waiting for a core), the jobs the plans
// start (median), the relative gap between the plan's objective and its
// bound (median and max), the plans proven optimal, and the peak heap
// during the rounds.
//
// The gap is |objective − bound| / |bound|, signed so that it is ≥ 0
// whenever the bound is valid (measure.RelGap: the bound is above the
// objective when maximising, below it when minimising, as Sia does with its
// default p < 0, whose values are negative powers): the program stops on a
// negative one, a bound on the wrong side. "+Inf" means no bound: the
// round's deadline cut the goodput matrix short (the plan is built on a
// partial matrix, which bounds nothing; Plan.Bound is ±Inf). 0 is a plan
// proven optimal.
//
//	go run ./examples/round-deadline -deadlines 5ms,20ms,100ms,1s -reps 5
//
// The contract (Scheduler.Round): Round returns within max(2 ms, 10% of D)
// after D. Wall time is measured on a possibly shared machine: the program
// prints the load average (uptime) it ran under.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sia-sched/sia/internal/measure"
	"github.com/sia-sched/sia/sia"
)

func main() {
	dls := flag.String("deadlines", "5ms,20ms,100ms,1s", "deadlines")
	reps := flag.Int("reps", 5, "rounds per snapshot and deadline")
	only := flag.String("only", "", "run the snapshots whose name contains this")
	setup := flag.Duration("setup", 2*time.Second, "deadline of the round that builds each snapshot's running jobs")
	verbose := flag.Bool("v", false, "one line per round")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the measured rounds to this file")
	parallel := flag.Int("parallel", 0, "sia.Options.Parallelism: goroutines that build the matrix (0: one)")
	flag.Parse()
	deadlines, err := measure.ParseDeadlines(*dls, time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "round-deadline:", err)
		os.Exit(2)
	}
	if *reps < 1 || *reps > 100 {
		fmt.Fprintln(os.Stderr, "round-deadline: -reps must be in [1,100]")
		os.Exit(2)
	}
	if err := measure.CheckCPUProfile(*prof); err != nil {
		fmt.Fprintln(os.Stderr, "round-deadline:", err)
		os.Exit(2)
	}
	if *parallel < 0 || *parallel > 256 {
		fmt.Fprintln(os.Stderr, "round-deadline: -parallel must be in [0,256]")
		os.Exit(2)
	}
	if *setup <= 0 || *setup > time.Minute {
		fmt.Fprintln(os.Stderr, "round-deadline: -setup must be in (0, 1m]")
		os.Exit(2)
	}
	var snaps []sia.Snapshot
	var names []string
	for _, c := range corpus {
		if !strings.Contains(c.name(), *only) {
			continue
		}
		snap, err := c.snapshot(*setup)
		if err != nil {
			fmt.Fprintln(os.Stderr, "round-deadline:", c.name(), err)
			os.Exit(1)
		}
		running, gpus := 0, 0
		for i := range snap.Jobs {
			if snap.Jobs[i].State.Current.Running() {
				running++
			}
		}
		for _, n := range snap.Nodes {
			gpus += n.GPUs
		}
		fmt.Printf("%s: %d jobs (%d running), %d GPUs on %d nodes\n", c.name(), len(snap.Jobs), running, gpus, len(snap.Nodes))
		snaps = append(snaps, snap)
		names = append(names, c.name())
	}
	if len(snaps) == 0 {
		fmt.Fprintln(os.Stderr, "round-deadline: no snapshot matches -only")
		os.Exit(2)
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average: %s", load)
	}
	fmt.Printf("%d rounds per deadline, GOMAXPROCS %d\n\n", len(snaps)**reps, runtime.GOMAXPROCS(0))
	fmt.Println("| deadline | overshoot p50 | p99 | max | contract | CPU past D p50 | max | started (median) | gap median | gap max | optimal | peak heap |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	var stages [4]time.Duration // the last round's validation+matrix, solve, placement, and the rest
	obs := func(e sia.Event) {
		switch e.Stage {
		case sia.StageMatrix:
			stages[0] += e.Duration
		case sia.StageSolve:
			stages[1] += e.Duration
		case sia.StagePlace:
			stages[2] += e.Duration
		}
	}
	s, err := sia.New(&sia.Options{Observer: obs, Parallelism: *parallel}) // -parallel 0: one goroutine, the round runs on this thread
	if err != nil {
		fmt.Fprintln(os.Stderr, "round-deadline:", err)
		os.Exit(1)
	}
	minimize := s.Options().P < 0 // the allocation problem's sense (sia.Options.P)
	stopProfile, err := measure.StartCPUProfile(*prof)
	if err != nil {
		fmt.Fprintln(os.Stderr, "round-deadline:", err)
		os.Exit(1)
	}
	defer stopProfile()
	runtime.LockOSThread()
	tid := measure.ThreadID()
	for _, d := range deadlines {
		var over, cpuOver []time.Duration
		var gaps []float64
		var started []int
		optimal := 0
		var peak uint64
		for si := range snaps {
			for r := 0; r < *reps; r++ {
				runtime.GC()
				base := measure.HeapBytes()
				stop := make(chan struct{})
				var pk atomic.Uint64
				go measure.SampleHeap(stop, &pk)
				stages = [4]time.Duration{}
				ctx, cancel := context.WithTimeout(context.Background(), d)
				dl, _ := ctx.Deadline()
				atD := measure.CPUAt(tid, dl)
				p, err := s.Round(ctx, snaps[si])
				end := time.Now()
				cEnd := measure.ReadOf(tid)
				co := time.Duration(0)
				if cD, _, reached := atD.Stop(); reached {
					co = cEnd.Since(cD)
				}
				cancel()
				close(stop)
				if err != nil {
					fmt.Fprintln(os.Stderr, "round-deadline:", names[si], err)
					os.Exit(1)
				}
				if err := checkPlan(&snaps[si], &p); err != nil {
					fmt.Fprintln(os.Stderr, "round-deadline: invalid plan:", names[si], err)
					os.Exit(1)
				}
				o := max(end.Sub(dl), 0)
				over = append(over, o)
				cpuOver = append(cpuOver, co)
				n := 0
				for _, dd := range p.Decisions {
					if dd.Action == sia.Start {
						n++
					}
				}
				started = append(started, n)
				g := measure.RelGap(p.Objective, p.Bound, minimize)
				if p.Status == sia.StatusOptimal {
					optimal++
				}
				if g < -1e-9 { // beyond rounding
					fmt.Fprintf(os.Stderr, "round-deadline: %s: bound %v on the wrong side of objective %v\n", names[si], p.Bound, p.Objective)
					os.Exit(1)
				}
				gaps = append(gaps, g)
				if pk.Load() > base {
					peak = max(peak, pk.Load()-base)
				}
				if *verbose {
					fmt.Printf("  %-36s %6v  %-8v over %8v  cpu-over %8v  started %4d  gap %.2e  matrix %v solve %v place %v\n", names[si], d, p.Status,
						o.Round(10*time.Microsecond), co.Round(10*time.Microsecond), n, g,
						stages[0].Round(10*time.Microsecond), stages[1].Round(10*time.Microsecond), stages[2].Round(10*time.Microsecond))
				}
			}
		}
		slices.Sort(over)
		slices.Sort(cpuOver)
		slices.Sort(gaps)
		slices.Sort(started)
		contract := max(2*time.Millisecond, d/10)
		ok := "met"
		if over[len(over)-1] > contract {
			ok = fmt.Sprintf("missed (> %v)", contract)
		}
		fmt.Printf("| %v | %v | %v | %v | %s | %v | %v | %d | %.2e | %.2e | %d/%d | %.1f MB |\n", d,
			measure.Quantile(over, 0.5), measure.Quantile(over, 0.99), over[len(over)-1].Round(10*time.Microsecond), ok,
			measure.Quantile(cpuOver, 0.5), cpuOver[len(cpuOver)-1].Round(10*time.Microsecond), started[len(started)/2],
			gaps[len(gaps)/2], gaps[len(gaps)-1], optimal, len(over), float64(peak)/(1<<20))
	}
	fmt.Println("\ngap: |objective − bound| / |bound|, ≥ 0 for a valid bound in the problem's sense; +Inf: no bound (the deadline cut the goodput matrix short)")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("\nload average after: %s", load)
	}
}

// checkPlan checks what a host relies on: one decision per job, no GPU
// given twice, pinned jobs kept on their GPUs.
func checkPlan(snap *sia.Snapshot, p *sia.Plan) error {
	if len(p.Decisions) != len(snap.Jobs) {
		return fmt.Errorf("%d decisions for %d jobs", len(p.Decisions), len(snap.Jobs))
	}
	owner := map[sia.GPU]string{}
	for i, d := range p.Decisions {
		j := &snap.Jobs[i]
		for _, g := range d.Allocation.Placement {
			if o, dup := owner[g]; dup {
				return fmt.Errorf("GPU %v given to %s and %s", g, o, d.Job)
			}
			owner[g] = d.Job
		}
		if j.NonPreemptible && j.State.Current.Running() && d.Action != sia.Keep {
			return fmt.Errorf("pinned job %s: %v", j.ID, d.Action)
		}
	}
	return nil
}
