// Command simulate is the project's main job: a trace-driven simulation of a
// GPU cluster that compares Sia with the Gavel and Pollux baselines, as in the
// paper's evaluation.
//
// With no flags it runs on built-in defaults (the built-in "model" ground
// truth, a generated 1.5-hour Helios-like workload at 20 jobs/h, the 64-GPU
// heterogeneous cluster), simulates the policies at the same time and prints
// a table with a short guide to its columns; progress goes to stderr.
//
//	go run ./examples/simulate
//	go run ./examples/simulate -data ../shared/data/profiles -workload ../shared/data/workloads/saturn
//	go run ./examples/simulate -policy sia,gavel -json
//	go run ./examples/simulate -policy sia -p 0.5 -variant paper -jobs-csv jobs.csv
//
// It prints one line per policy; in every column but policy and jobs,
// lower is better:
//
//	policy    the scheduling policy (sia, sia-rigid, pollux, gavel, ...)
//	jobs      jobs submitted in the workload(s)
//	unfin     jobs not finished when the simulation stopped (want 0)
//	avgJCT_h  average job completion time (finish − submit), hours
//	p99JCT_h  99th-percentile job completion time, hours
//	makespan  first submission to last finish, hours
//	GPUh/job  GPU-hours held per job (cost; restores included)
//	restarts  checkpoint-restarts per job (resize, migrate, move, resume)
//	worstρ    worst finish-time fairness ρ = JCT / JCT on a fair 1/N share
//	          of the cluster (≤ 1 is fair)
//	unfair    share of jobs with ρ > 1
//	pol_ms50  median time of one scheduling round, ms (pol_ms95: 95th
//	          percentile)
//	sim_s     wall time of simulating that policy, s
//
// The flags, tables, per-job output and plots are package simcli (go doc
// ./examples/simulate/simcli): a program of one's own registers its policies
// there and gets all of them.
package main

import "github.com/sia-sched/sia/examples/simulate/simcli"

func main() { simcli.Main() }
