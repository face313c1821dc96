package simcli

import (
	"fmt"
	"io"
	"strings"
)

// policyBlurbs say in one line what each built-in policy is.
var policyBlurbs = map[string]string{
	"sia":          "Sia: per round, GPU type, count and batch size from an integer program over goodput",
	"sia-rigid":    "Sia with every job at its requested GPU count and batch size (it picks only the type)",
	"pollux":       "Pollux: elastic count and batch size by a genetic search, blind to GPU types",
	"gavel":        "Gavel: rigid jobs, heterogeneity-aware time sharing in 6-minute rounds",
	"sia-oracle":   "Sia with the true throughput models from the start (no learning)",
	"sia-noprof":   "Sia without the 1-GPU profiles at arrival",
	"sia-artifact": "Sia as the published simulator runs it",
	"shockwave":    "Shockwave: rigid jobs, a look-ahead plan over 5 rounds for efficiency and finish-time fairness",
	"themis":       "Themis: rigid jobs, Gavel's time shares minimising the worst finish-time ratio",
	"gavel-clp":    "Gavel with its time-share LP solved by CLP (clp build tag)",
}

// writeExplanation prints, under the table, what was compared and how to
// read the columns, and names the policy with the lowest average JCT.
func writeExplanation(w io.Writer, c *config, os []outcome) {
	if len(os) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("\nWhat was compared: ")
	if c.workload == "" {
		fmt.Fprintf(&b, "the same generated workload (%g h of arrivals at %g jobs/h, seed %d)", c.hours, c.rate, c.seed)
	} else {
		fmt.Fprintf(&b, "the same workload (%s)", c.workload)
	}
	fmt.Fprintf(&b, " on the %s cluster, once per policy:\n", c.cluster)
	for _, name := range c.policies {
		if blurb, ok := policyBlurbs[name]; ok {
			fmt.Fprintf(&b, "  %-12s %s\n", name, blurb)
		}
	}
	b.WriteString(`Columns (lower is better unless said otherwise):
  jobs, unfin      jobs in the workload; jobs not finished when the run stopped
  avgJCT_h         average job completion time (finish - submit), hours: the headline metric
  p99JCT_h         99th-percentile JCT (the tail), hours; makespan: first arrival to last finish, hours
  GPUh/job         GPU-hours held per job; restarts: restarts per job (each costs a checkpoint-restore)
  worstρ, unfair   finish-time fairness ρ = JCT / JCT alone on an equal share of the cluster:
                   the worst ρ, and the share of jobs with ρ > 1 (treated worse than their share)
  pol_ms50/95      the policy's own decision time per round, median and p95, milliseconds
  sim_s            wall time of the simulation (shared with the other policies unless -parallel 1)
`)
	best := 0
	for i, o := range os {
		if o.summary.Jobs > 0 && o.summary.AvgJCT < os[best].summary.AvgJCT {
			best = i
		}
	}
	if s := os[best].summary; s.Jobs > 0 {
		fmt.Fprintf(&b, "Lowest average JCT: %s (%.3f h)", os[best].policy, s.AvgJCT/3600)
		for i, o := range os {
			if i != best && o.summary.Jobs > 0 && o.scale == os[best].scale && s.AvgJCT > 0 {
				fmt.Fprintf(&b, "; %s %.2fx", o.policy, o.summary.AvgJCT/s.AvgJCT)
			}
		}
		b.WriteString(".\n")
	}
	io.WriteString(w, b.String())
}
