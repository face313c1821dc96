// Command ilp-deadline measures ilp.Solve's deadline contract on the hard
// corpus (ilptest.HardCorpus, generated from its seeds): per deadline, the
// overshoot past the deadline (p50, p99, max over every solve), the
// relative gap |objective − bound|/|bound| (median and max over the
// instances, each instance's worst solve; signed so that it is ≥ 0 for a
// valid bound in either sense, measure.RelGap: the program stops on a
// negative one; +Inf for a fallback plan without a bound), the share of instances within
// the gap target, the solves proven optimal (they return before the
// deadline: overshoot 0), the peak heap during the solves, the median
// share of a core the solving thread got (its CPU time over the wall
// time: on a shared machine, the overshoot grows as it falls), the
// solving thread's CPU time past the deadline, and the solves during which
// a garbage collection ran (each solve starts after one, runtime.GC: a
// wall-clock overshoot well above the CPU time past D without one is the
// machine's descheduling, not the runtime's).
//
//	go run ./examples/ilp-deadline -deadlines 5ms,20ms,100ms,1s -reps 3
//
// With -extra it also runs harder quota instances beside the corpus
// (ilptest.HardExtra: overlapping and tight queue quotas).
//
// The contract: Solve returns within max(2 ms, 10% of D) after a deadline
// D. Timing is wall-clock on a possibly shared machine; the program prints
// the load average it ran under.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
	"github.com/sia-sched/sia/internal/numtext"
)

func main() {
	dls := flag.String("deadlines", "5ms,20ms,100ms,1s", "deadlines")
	reps := flag.Int("reps", 3, "solves per instance and deadline")
	only := flag.String("only", "", "run the instances whose name contains this")
	target := numtext.FloatFlag(flag.CommandLine, "gap", 1e-3, "relative gap target")
	verbose := flag.Bool("v", false, "one line per solve")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the solves to this file")
	extra := flag.Bool("extra", false, "also run the harder quota instances beside the corpus (ilptest.HardExtra)")
	late := flag.Bool("late", false, "print the solver's stack when a solve is still running at the contract's end (where the overshoot is)")
	flag.Parse()
	deadlines, err := measure.ParseDeadlines(*dls, time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deadline:", err)
		os.Exit(2)
	}
	if *reps < 1 || *reps > 100 {
		fmt.Fprintln(os.Stderr, "deadline: -reps must be in [1,100]")
		os.Exit(2)
	}
	if err := measure.CheckCPUProfile(*cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "deadline:", err)
		os.Exit(2)
	}
	if !(*target > 0 && *target <= 1) {
		fmt.Fprintf(os.Stderr, "deadline: -gap %v: want a relative gap in (0, 1]\n", *target)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "deadline: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	var probs []*ilp.Problem
	var names []string
	corpus := ilptest.HardCorpus()
	if *extra {
		corpus = append(corpus, ilptest.HardExtra()...)
	}
	for _, c := range corpus {
		if !strings.Contains(c.Name(), *only) {
			continue
		}
		p := ilptest.Hard(c)
		if err := p.Validate(); err != nil {
			fmt.Fprintln(os.Stderr, "deadline:", c.Name(), err)
			os.Exit(1)
		}
		probs = append(probs, p)
		names = append(names, c.Name())
	}
	if len(probs) == 0 {
		fmt.Fprintf(os.Stderr, "deadline: no instance matches -only %q\n", *only)
		os.Exit(2)
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average: %s", load)
	}
	fmt.Printf("corpus: %d instances, %d solves per deadline, GOMAXPROCS %d\n\n", len(probs), len(probs)**reps, runtime.GOMAXPROCS(0))
	fmt.Println("| deadline | overshoot p50 | p99 | max | contract | gap median | gap max | within target | optimal | unbounded | peak heap | CPU share | CPU after D p50 | max | GC |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	stopProfile, err := measure.StartCPUProfile(*cpuprofile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deadline:", err)
		os.Exit(1)
	}
	defer stopProfile()
	// the solving thread's CPU time against the wall clock says how much
	// of a core the machine gave the solver
	runtime.LockOSThread()
	tid := measure.ThreadID()
	for _, d := range deadlines {
		var over []time.Duration
		var gaps []float64
		optimal, within, fallbacks := 0, 0, 0
		var peak uint64
		var shares []float64
		var cpuOver []time.Duration
		gcSolves := 0 // solves during which a garbage collection ran
		for pi, p := range probs {
			worst := 0.0
			for r := 0; r < *reps; r++ {
				runtime.GC()
				gc0 := gcCycles()
				base := measure.HeapBytes()
				stop := make(chan struct{})
				var pk atomic.Uint64
				go measure.SampleHeap(stop, &pk)
				ctx, cancel := context.WithTimeout(context.Background(), d)
				dl, _ := ctx.Deadline()
				r0 := measure.Read()
				atD := measure.CPUAt(tid, dl)
				var lateTm *time.Timer
				if *late {
					lateTm = time.AfterFunc(time.Until(dl.Add(max(2*time.Millisecond, d/10))), func() { printLate(names[pi], d) })
				}
				sol, err := ilp.Solve(ctx, p, nil)
				end := time.Now()
				cEnd := measure.ReadOf(tid)
				if lateTm != nil {
					lateTm.Stop()
				}
				co := time.Duration(0)
				if cD, _, reached := atD.Stop(); reached {
					co = cEnd.Since(cD)
				}
				cpuOver = append(cpuOver, co)
				if w := end.Sub(r0.Wall); w > 0 {
					shares = append(shares, float64(measure.Read().Since(r0))/float64(w))
				}
				cancel()
				close(stop)
				if err != nil {
					fmt.Fprintln(os.Stderr, "deadline:", names[pi], err)
					os.Exit(1)
				}
				if err := p.Check(sol.Assignment); err != nil {
					fmt.Fprintln(os.Stderr, "deadline: infeasible plan:", names[pi], err)
					os.Exit(1)
				}
				// (read after the check: a cycle started in the solve's last
				// milliseconds has completed by then)
				if gcCycles() != gc0 {
					gcSolves++
				}
				o := max(end.Sub(dl), 0)
				if sol.Status == ilp.Optimal {
					optimal++
					o = 0 // returned before the deadline
				}
				over = append(over, o)
				g := measure.RelGap(sol.Objective, sol.Bound, p.Sense == ilp.Minimize)
				if math.IsInf(sol.Bound, 0) {
					fallbacks++ // a fallback plan: nothing bounded (gap +Inf)
				}
				if g < -1e-9 { // beyond rounding
					fmt.Fprintf(os.Stderr, "deadline: %s: bound %v on the wrong side of objective %v\n", names[pi], sol.Bound, sol.Objective)
					os.Exit(1)
				}
				worst = math.Max(worst, g)
				if pk.Load() > base {
					peak = max(peak, pk.Load()-base)
				}
				if *verbose {
					fmt.Printf("  %-28s %6v  %-8v over %8v  cpu-over %8v  gap %.2e  nodes %d\n", names[pi], d, sol.Status, o.Round(10*time.Microsecond), co.Round(10*time.Microsecond), g, sol.Nodes)
				}
			}
			gaps = append(gaps, worst)
			if worst <= *target {
				within++
			}
		}
		slices.Sort(over)
		slices.Sort(gaps)
		contract := max(2*time.Millisecond, d/10)
		ok := "met"
		if over[len(over)-1] > contract {
			ok = fmt.Sprintf("missed (> %v)", contract)
		}
		slices.Sort(shares)
		slices.Sort(cpuOver)
		fmt.Printf("| %v | %v | %v | %v | %s | %.2e | %.2e | %d/%d | %d/%d | %d/%d | %.1f MB | %.0f%% | %v | %v | %d/%d |\n", d,
			measure.Quantile(over, 0.5), measure.Quantile(over, 0.99), over[len(over)-1].Round(10*time.Microsecond), ok,
			gaps[len(gaps)/2], gaps[len(gaps)-1], within, len(gaps), optimal, len(over), fallbacks, len(over), float64(peak)/(1<<20), 100*shares[len(shares)/2],
			measure.Quantile(cpuOver, 0.5), cpuOver[len(cpuOver)-1].Round(10*time.Microsecond), gcSolves, len(over))
	}
}

// gcCycles returns the number of garbage-collection cycles completed so
// far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// printLate prints the stack of the main goroutine (the solver's): it is
// called when a solve is still running at the end of the contract.
func printLate(name string, d time.Duration) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "ilp.Solve(") {
			fmt.Printf("late: %s %v\n%s\n\n", name, d, g)
		}
	}
}
