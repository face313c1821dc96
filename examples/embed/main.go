// Command embed shows how a host embeds package sia: a loop that builds a
// Snapshot every round, calls Scheduler.Round, applies the Plan with a fake
// executor (checkpoint, restart, resize, migrate), lets the jobs run, and
// reports what they measured back into their bootstrap.Trackers.
//
// It needs no data files: the jobs' "true" speeds are built-in parameters
// (loosely shaped after cifar10, imagenet and bert on T4, A100 and RTX
// GPUs), and the trackers only ever see what the jobs report.
//
// Usage:
//
//	go run ./examples/embed [-rounds 300] [-jobs 12] [-seed 1] [-v]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// app is an application's ground truth, known to the fake executor only.
type app struct {
	name       string
	initBatch  int
	maxBatch   int
	limits     map[string]goodput.Limits
	truth      map[string]goodput.Params
	noise      float64 // gradient noise var/sqr at the start; grows as training proceeds
	work       float64 // M0-equivalent iterations to finish
	restartDur time.Duration
}

var apps = []app{
	{
		name: "cifar10", initBatch: 128, maxBatch: 4096, noise: 5, work: 40000, restartDur: 30 * time.Second,
		limits: map[string]goodput.Limits{"t4": {MinLocalBatch: 32, MaxLocalBatch: 1024}, "a100": {MinLocalBatch: 32, MaxLocalBatch: 4096}, "rtx": {MinLocalBatch: 32, MaxLocalBatch: 1024}},
		truth: map[string]goodput.Params{
			"t4":   {AlphaC: 0.010, BetaC: 0.00068, AlphaN: 0.050, BetaN: 0.005, AlphaR: 0.015, BetaR: 0.002, Gamma: 1.4},
			"a100": {AlphaC: 0.005, BetaC: 0.00010, AlphaN: 0.025, BetaN: 0.003, AlphaR: 0.008, BetaR: 0.001, Gamma: 1.4},
			"rtx":  {AlphaC: 0.010, BetaC: 0.00030, AlphaN: 0.050, BetaN: 0.005, AlphaR: 0.015, BetaR: 0.002, Gamma: 1.4},
		},
	},
	{
		name: "imagenet", initBatch: 200, maxBatch: 12800, noise: 20, work: 60000, restartDur: 120 * time.Second,
		limits: map[string]goodput.Limits{"t4": {MinLocalBatch: 20, MaxLocalBatch: 200}, "a100": {MinLocalBatch: 20, MaxLocalBatch: 800}, "rtx": {MinLocalBatch: 20, MaxLocalBatch: 200}},
		truth: map[string]goodput.Params{
			"t4":   {AlphaC: 0.02, BetaC: 0.0045, AlphaN: 0.20, BetaN: 0.010, AlphaR: 0.06, BetaR: 0.004, Gamma: 1.6},
			"a100": {AlphaC: 0.02, BetaC: 0.00094, AlphaN: 0.10, BetaN: 0.005, AlphaR: 0.03, BetaR: 0.002, Gamma: 1.6},
			"rtx":  {AlphaC: 0.02, BetaC: 0.0024, AlphaN: 0.20, BetaN: 0.010, AlphaR: 0.06, BetaR: 0.004, Gamma: 1.6},
		},
	},
	{
		name: "bert", initBatch: 12, maxBatch: 384, noise: 30, work: 20000, restartDur: 60 * time.Second,
		limits: map[string]goodput.Limits{"t4": {MinLocalBatch: 4, MaxLocalBatch: 12}, "a100": {MinLocalBatch: 4, MaxLocalBatch: 48}, "rtx": {MinLocalBatch: 4, MaxLocalBatch: 12}},
		truth: map[string]goodput.Params{
			"t4":   {AlphaC: 0.08, BetaC: 0.070, AlphaN: 0.20, BetaN: 0.020, AlphaR: 0.06, BetaR: 0.008, Gamma: 1.2},
			"a100": {AlphaC: 0.03, BetaC: 0.0065, AlphaN: 0.10, BetaN: 0.010, AlphaR: 0.03, BetaR: 0.004, Gamma: 1.2},
			"rtx":  {AlphaC: 0.03, BetaC: 0.035, AlphaN: 0.20, BetaN: 0.020, AlphaR: 0.06, BetaR: 0.008, Gamma: 1.2},
		},
	},
}

// cluster is a small heterogeneous cluster: 2 × 4 T4, 1 × 8 A100, 1 × 8 RTX.
func cluster() []sia.Node {
	return []sia.Node{
		{ID: "t4-0", Type: "t4", GPUs: 4}, {ID: "t4-1", Type: "t4", GPUs: 4},
		{ID: "a100-0", Type: "a100", GPUs: 8},
		{ID: "rtx-0", Type: "rtx", GPUs: 8},
	}
}

// job is the host's record of one job: the sia.Job it submits every round
// and what the fake executor needs to run it.
type job struct {
	sia       sia.Job
	app       *app
	tracker   *bootstrap.Tracker
	submitted time.Time
	progress  float64       // M0-equivalent iterations done
	restore   time.Duration // checkpoint-restore time left
	decision  sia.Decision
	done      time.Time
}

// config of the demo.
type config struct {
	rounds, jobs int
	seed         uint64
	verbose      bool
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c config
	fs.IntVar(&c.rounds, "rounds", 300, "number of 60 s rounds to simulate")
	fs.IntVar(&c.jobs, "jobs", 12, "number of jobs submitted (one every two minutes)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the fake executor's measurement noise")
	fs.BoolVar(&c.verbose, "v", false, "print every decision, not only changes")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.rounds <= 0:
		return c, fmt.Errorf("-rounds must be > 0, got %d", c.rounds)
	case c.jobs <= 0:
		return c, fmt.Errorf("-jobs must be > 0, got %d", c.jobs)
	}
	return c, nil
}

func run(args []string, out io.Writer) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const roundLen = time.Minute
	sched, err := sia.New(nil) // the paper's defaults
	if err != nil {
		return err
	}

	// One seeded tracker prototype per application, cloned per job: the
	// 1-GPU profiles are measured once per application and type.
	protos := map[string]*bootstrap.Tracker{}
	for i := range apps {
		a := &apps[i]
		tr, err := bootstrap.New(bootstrap.Spec{InitBatch: a.initBatch, MaxBatch: a.maxBatch, Limits: a.limits}, nil)
		if err != nil {
			return err
		}
		for _, t := range sortedTypes(a.limits) {
			var rows []goodput.Observation
			for b := a.limits[t].MinLocalBatch; b <= a.limits[t].MaxLocalBatch; b *= 2 {
				rows = append(rows, measure(rng, a.truth[t], 1, 1, b))
			}
			if err := tr.Seed(t, rows...); err != nil {
				return err
			}
		}
		protos[a.name] = tr
	}

	var jobs []*job
	now := t0
	for round := 0; round < cfg.rounds; round++ {
		// Submissions: one job every two minutes.
		for len(jobs) < cfg.jobs && now.Sub(t0) >= time.Duration(len(jobs))*2*time.Minute {
			a := &apps[len(jobs)%len(apps)]
			tr := protos[a.name].Clone()
			id := fmt.Sprintf("%s-%d", a.name, len(jobs))
			j := &job{app: a, tracker: tr, submitted: now,
				sia: sia.Job{ID: id, Application: a.name, Submitted: now, Models: tr}}
			j.sia.State.RestartCost = a.restartDur
			jobs = append(jobs, j)
			fmt.Fprintf(out, "%5s submit  %s\n", clock(now.Sub(t0)), id)
		}
		// 1. Snapshot of the active jobs.
		snap := sia.Snapshot{Now: now, Nodes: cluster()}
		var active []*job
		for _, j := range jobs {
			if j.done.IsZero() {
				snap.Jobs = append(snap.Jobs, j.sia)
				active = append(active, j)
			}
		}
		if len(active) == 0 && len(jobs) == cfg.jobs {
			break
		}
		// 2. The round.
		plan, err := sched.Round(context.Background(), snap)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		// 3. Apply the plan: the fake executor checkpoints and restarts
		// jobs whose allocation changes.
		for i, d := range plan.Decisions {
			j := active[i]
			st := &j.sia.State
			if cfg.verbose || (d.Action != sia.Keep && d.Action != sia.Queue) {
				fmt.Fprintf(out, "%5s %-7s %s", clock(now.Sub(t0)), d.Action, d.Job)
				if d.Allocation.Running() {
					fmt.Fprintf(out, " -> %d×%s on %d node(s), batch %d (%d/GPU × %d)", d.Allocation.GPUs, d.Allocation.Type,
						d.Allocation.Nodes, d.GlobalBatch, d.LocalBatch, d.AccumSteps+1)
				}
				fmt.Fprintln(out)
			}
			// The library's bookkeeping: Current, Restarts, PeakReplicas
			// and the restore that pins the job (RestoreUntil).
			st.Advance(d)
			switch {
			case d.Restart:
				j.restore = st.RestoreUntil.Sub(now) // checkpoint now, restore on the new GPUs
			case d.Action == sia.Start:
				j.restore = 10 * time.Second // first start: launch only
			case d.Action == sia.Preempt:
				j.restore = 0
			}
			j.decision = d
		}
		// 4. Run the round and report measurements.
		for _, j := range active {
			d := j.decision
			if !d.Allocation.Running() {
				continue
			}
			run := roundLen
			if j.restore > 0 {
				wait := min(j.restore, run)
				j.restore -= wait
				run -= wait
			}
			if run <= 0 {
				continue
			}
			t := d.Allocation.Type
			truth := j.app.truth[t]
			nodes, reps := d.Allocation.Nodes, d.Replicas
			grad := j.gradStats()
			x := truth.Throughput(nodes, reps, float64(d.LocalBatch), d.AccumSteps)
			gain := goodput.Gain(grad, float64(j.app.initBatch), float64(d.GlobalBatch))
			iters := x / float64(d.GlobalBatch) * gain * run.Seconds()
			if j.progress+iters >= j.app.work {
				left := (j.app.work - j.progress) / iters * run.Seconds()
				j.progress = j.app.work
				j.done = now.Add(roundLen - run + time.Duration(left*float64(time.Second)))
				fmt.Fprintf(out, "%5s finish  %s (JCT %s, %d restarts)\n", clock(j.done.Sub(t0)), j.sia.ID,
					clock(j.done.Sub(j.submitted)), j.sia.State.Restarts)
				continue
			}
			j.progress += iters
			o := measure(rng, truth, nodes, reps, d.LocalBatch)
			if _, err := j.tracker.Observe(t, bootstrap.Measurement{Nodes: nodes, Replicas: reps, LocalBatch: d.LocalBatch,
				StepTime: o.StepTime, SyncTime: o.SyncTime, Grad: &grad}); err != nil {
				return fmt.Errorf("job %s: %w", j.sia.ID, err)
			}
		}
		now = now.Add(roundLen)
	}
	return summary(out, jobs, t0)
}

// gradStats are the job's gradient statistics: the noise grows as training
// proceeds, so larger batches pay off later.
func (j *job) gradStats() goodput.GradStats {
	frac := j.progress / j.app.work
	return goodput.GradStats{Sqr: 1, Var: j.app.noise * (1 + 9*frac)}
}

// measure returns a noisy measurement of the true step and sync times.
func measure(rng *rand.Rand, p goodput.Params, nodes, replicas, b int) goodput.Observation {
	noise := 1 + 0.03*(rng.Float64()*2-1)
	acc := p.AccumTime(float64(b)) * noise
	step := p.IterTime(nodes, replicas, float64(b), 0) * noise
	return goodput.Observation{Nodes: nodes, Replicas: replicas, LocalBatch: b, StepTime: step, SyncTime: math.Max(0, step-acc)}
}

func summary(out io.Writer, jobs []*job, t0 time.Time) error {
	var jct []float64
	restarts := 0
	for _, j := range jobs {
		if j.done.IsZero() {
			fmt.Fprintf(out, "unfinished %s (%.0f%% done)\n", j.sia.ID, 100*j.progress/j.app.work)
			continue
		}
		jct = append(jct, j.done.Sub(j.submitted).Hours())
		restarts += j.sia.State.Restarts
	}
	if len(jct) == 0 {
		return errors.New("no job finished; try more -rounds")
	}
	sort.Float64s(jct)
	sum := 0.0
	for _, v := range jct {
		sum += v
	}
	fmt.Fprintf(out, "finished %d/%d jobs, avg JCT %.2f h, max %.2f h, %.1f restarts per job\n",
		len(jct), len(jobs), sum/float64(len(jct)), jct[len(jct)-1], float64(restarts)/float64(len(jct)))
	return nil
}

func clock(d time.Duration) string {
	m := int(d.Minutes())
	return fmt.Sprintf("%d:%02d", m/60, m%60)
}

func sortedTypes(m map[string]goodput.Limits) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
