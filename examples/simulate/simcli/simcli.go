// Package simcli is examples/simulate's command line as a library: flags,
// runs, tables, per-job output and plots over a registry of policies. A
// researcher's own main adds a policy and gets all of it:
//
//	func main() {
//		simcli.Register(simcli.Policy{Name: "mine", New: func(env simcli.Env) (sim.Policy, error) {
//			return newMine(env.Cluster, env.Truth), nil
//		}})
//		simcli.Main()
//	}
//
// It lives under examples/ because it draws plots with gonum/plot, which the
// library packages do not import.
//
// Flags:
//
//	-workload FILE|DIR  workload CSV, or a folder: every workload-*.csv in it, metrics pooled
//	                    (a %d in the path is replaced by each -scale value)
//	-data DIR           profiles folder: use the "trace" ground truth (default: built-in "model")
//	-cluster SPEC       heterogeneous|homogeneous|physical|type:NxR,... (default heterogeneous)
//	-scale K[,K...]     multiply node counts by K (several values: one run per scale)
//	-policy LIST        comma list of registered policies (default sia,sia-rigid,pollux,gavel;
//	                    also sia-oracle, sia-noprof)
//	-round DURATION     round length, 1s..24h (default 60s; 360s for gavel unless given)
//	-p P, -lambda L     Sia's fairness exponent p and λ (0 = the library's defaults)
//	-variant V          Sia's variant: artifact (default, the published simulator's) or paper
//	-seed N             seed of the generated workload and of Pollux's search
//	-hours H, -rate R   length and arrival rate of the generated workload (default 1.5, 20)
//	-json               one JSON object per policy per line instead of the table
//	-jobs-csv FILE      per-job results (arrival, start, finish, JCT, GPU-hours, restarts) as CSV
//	-jobs-json FILE     the same as a JSON array
//	-plot DIR           write PNG and SVG figures (JCT CDF, GPUs in use per type, average JCT per
//	                    policy, policy runtime with p25-p75 and JCT vs scale) and summary.csv
//	-replot CSV[,CSV]   with -plot DIR: redraw Figure 9 and the JCT bars from summary.csv
//	                    files of earlier -plot runs (no simulation)
//	-cpuprofile FILE    write a CPU profile of the whole run (go tool pprof)
//	-noftf              skip the finish-time-fairness runs
//	-gpt DURATION       add the hybrid-parallel GPT job of the paper's §5.3 (gpt-0) to every
//	                    workload, submitted at DURATION (needs -data; only Sia schedules it)
//	-parallel N         policies simulated at the same time (default GOMAXPROCS); results do not
//	                    depend on it, the wall-clock columns do: use -parallel 1 to measure runtime
package simcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sia-sched/sia/fairness"
	"github.com/sia-sched/sia/internal/numtext"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

// Main runs the command line of the default registry on os.Args and exits
// (status 2 on an error, with the message on stderr).
func Main() { Default.Main() }

// Main runs the command line of r on os.Args and exits.
func (r *Registry) Main() {
	if err := r.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		fmt.Fprintln(os.Stderr, "simulate:", msg)
		os.Exit(2)
	}
}

// Run runs the command line of the default registry: args are the flags
// (without the program name); tables and JSON go to stdout, progress to
// stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return Default.Run(ctx, args, stdout, stderr)
}

// config is the parsed command line.
type config struct {
	workload, data, cluster string
	scales                  []int
	policies                []string
	round                   time.Duration
	roundSet                bool
	seed                    uint64
	hours, rate             float64
	p, lambda               float64
	artifact                *sia.ArtifactKnobs
	json                    bool
	jobsCSV, jobsJSON       string
	plot                    string
	cpuProfile              string
	replot                  []string
	noFTF                   bool
	parallel                int
	gpt                     string // -gpt: the GPT job's submission time ("" = none)
}

const defaultPolicies = "sia,sia-rigid,pollux,gavel"

// defaultHours is the length of the generated workload: an hour and a half
// at 20 jobs/h (33 jobs with seed 1) keeps the first run of
// examples/simulate within a few seconds on two cores (Pollux's search is
// its longest part) while the cluster is still contended.
const defaultHours = 1.5

func (r *Registry) parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &config{}
	var scale, policy, variant string
	fs.StringVar(&c.workload, "workload", "", "workload CSV file or folder of workload-*.csv")
	fs.StringVar(&c.data, "data", "", "profiles folder (trace ground truth); default: built-in model")
	fs.StringVar(&c.cluster, "cluster", "heterogeneous", "heterogeneous|homogeneous|physical|type:NxR,...")
	fs.StringVar(&scale, "scale", "1", "node-count multiplier(s), comma separated")
	fs.StringVar(&policy, "policy", defaultPolicies, "comma list of "+strings.Join(r.Names(), ", "))
	fs.DurationVar(&c.round, "round", 60*time.Second, "round length (gavel: 360s unless given)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the generated workload and of Pollux")
	numtext.FloatVar(fs, &c.hours, "hours", defaultHours, "hours of the generated workload")
	numtext.FloatVar(fs, &c.rate, "rate", 20, "jobs per hour of the generated workload")
	numtext.FloatVar(fs, &c.p, "p", 0, "Sia's fairness exponent p (0 = default)")
	numtext.FloatVar(fs, &c.lambda, "lambda", 0, "Sia's λ, the value of leaving a job without GPUs (0 = default)")
	fs.StringVar(&variant, "variant", "artifact", "Sia's variant: artifact or paper")
	fs.BoolVar(&c.json, "json", false, "one JSON object per policy per line")
	fs.StringVar(&c.jobsCSV, "jobs-csv", "", "file for per-job results as CSV")
	fs.StringVar(&c.jobsJSON, "jobs-json", "", "file for per-job results as JSON")
	fs.StringVar(&c.plot, "plot", "", "folder for PNG figures")
	fs.BoolVar(&c.noFTF, "noftf", false, "skip finish-time fairness")
	fs.StringVar(&c.gpt, "gpt", "", "add the hybrid-parallel GPT job (paper §5.3) to every workload, submitted at this time (e.g. 0s, 10m; needs -data)")
	fs.IntVar(&c.parallel, "parallel", runtime.GOMAXPROCS(0), "policies simulated at the same time (1 = one after another, for runtime measurements)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile (go tool pprof) to this file")
	var replotFiles string
	fs.StringVar(&replotFiles, "replot", "", "comma list of summary.csv files: draw their figures into -plot DIR without simulating")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: simulate [flags]; see go doc ./examples/simulate/simcli")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if c.parallel < 1 {
		return nil, fmt.Errorf("-parallel %d: want at least 1", c.parallel)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if replotFiles != "" {
		c.replot = strings.Split(replotFiles, ",")
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "round" {
			c.roundSet = true
		}
	})
	if lo, hi := time.Duration(sim.MinRound)*time.Second, time.Duration(sim.MaxRound)*time.Second; c.round < lo || c.round > hi {
		return nil, fmt.Errorf("-round %v: want %v..%v", c.round, lo, hi)
	}
	switch variant {
	case "artifact":
		c.artifact = sia.PublishedArtifact()
	case "paper":
		c.artifact = nil
	default:
		return nil, fmt.Errorf("-variant %q: want artifact or paper", variant)
	}
	if err := (&sia.Options{P: c.p, Lambda: c.lambda, Artifact: c.artifact}).Validate(); err != nil {
		return nil, fmt.Errorf("-p %v -lambda %v: %w", c.p, c.lambda, err)
	}
	for _, s := range strings.Split(scale, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 || k > 1024 {
			return nil, fmt.Errorf("-scale %q: want positive integers (at most 1024), comma separated", scale)
		}
		c.scales = append(c.scales, k)
	}
	seen := map[string]bool{}
	for _, p := range strings.Split(policy, ",") {
		p = strings.TrimSpace(p)
		if _, ok := r.lookup(p); !ok {
			return nil, fmt.Errorf("-policy: unknown policy %q (known: %s)", p, strings.Join(r.Names(), ", "))
		}
		if !seen[p] {
			seen[p] = true
			c.policies = append(c.policies, p)
		}
	}
	return c, nil
}

// checkOutFile checks, before any simulation, that an output file can be
// written where it is asked for ("" = none): its folder exists and it is not
// itself a folder (found only after the whole run before).
func checkOutFile(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// outcome is one policy's pooled result at one scale.
type outcome struct {
	policy  string
	scale   int
	gpus    int
	summary sim.Summary
	ftf     fairness.Summary
	hasFTF  bool
	rhos    []float64 // every finished job's ρ (Figure 8's FTF CDF)
	wall    time.Duration
	results []*sim.Result
}

// Run runs the command line of r: args are the flags (without the program
// name); tables and JSON go to stdout, progress to stderr.
func (r *Registry) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := r.parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.plot != "" {
		if err := os.MkdirAll(c.plot, 0o755); err != nil {
			return fmt.Errorf("-plot: %v", err)
		}
	}
	for _, out := range []struct{ flag, path string }{{"-jobs-csv", c.jobsCSV}, {"-jobs-json", c.jobsJSON}} {
		if err := checkOutFile(out.path); err != nil {
			return fmt.Errorf("%s: %v", out.flag, err)
		}
	}
	if len(c.replot) > 0 {
		if c.plot == "" {
			return fmt.Errorf("-replot needs -plot DIR")
		}
		return replot(c.replot, c.plot)
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}
	var outcomes []outcome
	for _, scale := range c.scales {
		cl, err := sim.ParseCluster(c.cluster, scale)
		if err != nil {
			return fmt.Errorf("-cluster: %w", err)
		}
		var truth sim.Truth
		if c.data != "" {
			truth, err = sim.LoadTrace(c.data, cl.Types())
		} else {
			truth, err = sim.LoadModel()
		}
		if err != nil {
			return err
		}
		for _, t := range cl.Types() {
			if c.data == "" {
				if _, ok := sim.ProfileTypes[t]; !ok {
					return fmt.Errorf("-cluster: GPU type %q unknown to the built-in model (known: t4, a100, rtx, quad, v100)", t)
				}
			}
		}
		var wls []*sim.Workload
		if c.workload != "" {
			path := c.workload
			if strings.Contains(path, "%d") {
				path = fmt.Sprintf(path, scale)
			}
			if wls, err = sim.LoadWorkloads(path); err != nil {
				return err
			}
		} else {
			wl, err := sim.Generate(c.seed, c.hours, c.rate)
			if err != nil {
				return err
			}
			wls = []*sim.Workload{wl}
		}
		if wls, err = addGPTFlag(c.gpt, wls, truth); err != nil {
			return err
		}
		outs, err := r.runPolicies(ctx, c, cl, truth, wls, stderr)
		if err != nil {
			return err
		}
		for i, pname := range c.policies {
			o := outs[i]
			o.scale = scale
			o.gpus = cl.TotalGPUs()
			if len(c.scales) > 1 {
				o.policy = fmt.Sprintf("%s@x%d", pname, scale)
			}
			outcomes = append(outcomes, o)
			if c.json {
				if err := writeJSON(stdout, o); err != nil {
					return err
				}
			}
		}
	}
	if !c.json {
		writeTable(stdout, outcomes, !c.noFTF)
		writeExplanation(stdout, c, outcomes)
	}
	if err := writeJobs(c, outcomes); err != nil {
		return err
	}
	if c.plot != "" {
		if err := writePlots(c.plot, outcomes); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
		fmt.Fprintf(stderr, "figures written to %s\n", c.plot)
	}
	return nil
}

// newPolicy builds a registered policy for one workload and its run's
// configuration.
func (r *Registry) newPolicy(c *config, name string, cl sim.Cluster, truth sim.Truth) (sim.Policy, sim.Config, error) {
	spec, _ := r.lookup(name)
	round := c.round
	if !c.roundSet && spec.Round > 0 {
		round = spec.Round
	}
	cfg := sim.Config{Cluster: cl, Truth: truth, Round: round.Seconds(), Rigid: spec.Rigid, Batch: spec.Batch}
	env := Env{Cluster: cl, Truth: truth, Round: cfg.Round, Seed: c.seed, P: c.p, Lambda: c.lambda, Artifact: c.artifact}
	p, err := spec.New(env)
	if err != nil {
		return nil, cfg, fmt.Errorf("policy %s: %w", name, err)
	}
	if p == nil {
		return nil, cfg, fmt.Errorf("policy %s: its constructor returned no policy", name)
	}
	return p, cfg, nil
}

// runPolicy runs one policy on the workloads; iso holds the isolated runs
// of finish-time fairness, shared by the policies run on cl and truth.
func (r *Registry) runPolicy(ctx context.Context, c *config, name string, cl sim.Cluster, truth sim.Truth, iso *sim.IsolatedRuns, wls []*sim.Workload, stderr io.Writer) (outcome, error) {
	o := outcome{policy: name}
	var rhos []float64
	for i, wl := range wls {
		pol, cfg, err := r.newPolicy(c, name, cl, truth)
		if err != nil {
			return o, err
		}
		t0 := time.Now()
		res, err := sim.Run(ctx, cfg, wl, pol)
		if err != nil {
			return o, err
		}
		o.wall += time.Since(t0)
		o.results = append(o.results, res)
		s := sim.Summarize([]*sim.Result{res})
		fmt.Fprintf(stderr, "%-10s %-16s (%d/%d) %4d jobs  avg JCT %.3f h  %.1f s\n", name, wl.Name, i+1, len(wls), s.Jobs, s.AvgJCT/3600, time.Since(t0).Seconds())
		if !c.noFTF {
			rs, err := iso.FTF(ctx, cl, wl, res, cfg.Rigid)
			if err != nil {
				return o, fmt.Errorf("finish-time fairness of %s on %s: %w", name, wl.Name, err)
			}
			rhos = append(rhos, fairness.Rhos(rs)...)
		}
	}
	o.summary = sim.Summarize(o.results)
	if len(rhos) > 0 {
		fs, err := fairness.Summarize(rhos)
		if err != nil {
			return o, err
		}
		o.ftf, o.hasFTF, o.rhos = fs, true, rhos
	}
	return o, nil
}

// jsonLine has exactly the keys of the issue, in order.
type jsonLine struct {
	Policy         string  `json:"policy"`
	Workloads      int     `json:"workloads"`
	Jobs           int     `json:"jobs"`
	Unfinished     int     `json:"unfinished"`
	AvgJCTH        float64 `json:"avg_jct_h"`
	P99JCTH        float64 `json:"p99_jct_h"`
	MakespanH      float64 `json:"makespan_h"`
	GPUHoursPerJob float64 `json:"gpu_hours_per_job"`
	RestartsPerJob float64 `json:"restarts_per_job"`
	WorstFTF       float64 `json:"worst_ftf"`
	UnfairFraction float64 `json:"unfair_fraction"`
	PolicyMsMedian float64 `json:"policy_ms_median"`
	PolicyMsP95    float64 `json:"policy_ms_p95"`
	SimWallS       float64 `json:"sim_wall_s"`
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func writeJSON(w io.Writer, o outcome) error {
	s := o.summary
	l := jsonLine{Policy: o.policy, Workloads: s.Workloads, Jobs: s.Jobs, Unfinished: s.Unfinished,
		AvgJCTH: round4(s.AvgJCT / 3600), P99JCTH: round4(s.P99JCT / 3600), MakespanH: round4(s.Makespan / 3600),
		GPUHoursPerJob: round4(s.GPUHoursPerJob), RestartsPerJob: round4(s.RestartsPerJob),
		PolicyMsMedian: round4(float64(s.PolicyMedian) / 1e6), PolicyMsP95: round4(float64(s.PolicyP95) / 1e6),
		SimWallS: round4(o.wall.Seconds())}
	if o.hasFTF {
		l.WorstFTF, l.UnfairFraction = round4(o.ftf.Worst), round4(o.ftf.UnfairFraction)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func writeTable(w io.Writer, os []outcome, ftf bool) {
	fmt.Fprintf(w, "%-14s %5s %6s %8s %8s %9s %8s %9s %7s %7s %9s %9s %8s\n",
		"policy", "jobs", "unfin", "avgJCT_h", "p99JCT_h", "makespan", "GPUh/job", "restarts", "worstρ", "unfair", "pol_ms50", "pol_ms95", "sim_s")
	sort.SliceStable(os, func(a, b int) bool { return os[a].scale < os[b].scale })
	for _, o := range os {
		s := o.summary
		wr, uf := "-", "-"
		if ftf && o.hasFTF {
			wr, uf = fmt.Sprintf("%.2f", o.ftf.Worst), fmt.Sprintf("%.1f%%", 100*o.ftf.UnfairFraction)
		}
		fmt.Fprintf(w, "%-14s %5d %6d %8.3f %8.2f %9.2f %8.2f %9.2f %7s %7s %9.2f %9.2f %8.1f\n",
			o.policy, s.Jobs, s.Unfinished, s.AvgJCT/3600, s.P99JCT/3600, s.Makespan/3600, s.GPUHoursPerJob, s.RestartsPerJob,
			wr, uf, float64(s.PolicyMedian)/1e6, float64(s.PolicyP95)/1e6, o.wall.Seconds())
	}
}
