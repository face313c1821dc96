// Package sim is a trace-driven simulator of a GPU cluster for scheduling
// experiments: the engine that steps jobs round by round as the published
// Sia artifact's simulator does, the Policy interface a scheduler
// implements, the two ground truths (TraceTruth: measured profiles read by
// LoadTrace; ModelTruth: the built-in model of the paper's six models, from
// LoadModel), workload readers (ReadWorkload, LoadWorkloads) and a
// Helios-like generator (Generate), cluster specifications (ParseCluster,
// NewCluster), the paper's metrics (Summarize) and finish-time fairness
// (FTF).
//
// A run is Simulator.Run (or Run with a Config): nil *Options are the
// defaults, bad input is an *InputError wrapping ErrInvalidInput that names
// the file, line, job and field, a policy's failure is a *PolicyError, ctx
// cancels a run between rounds, and the same workload, policy and seed give
// the same Result (apart from wall times) on any machine under any load:
// simulated rounds have no wall-clock deadline (a policy's Schedule gets
// ctx without it; siapolicy runs package sia's rounds without a deadline,
// their solver bounded by a node limit instead). Every run ends: rounds are
// MinRound..MaxRound long, at most MaxRounds of them.
//
// # Hybrid-parallel jobs
//
// Besides data-parallel jobs, the trace ground truth has the paper's §5.3
// hybrid-parallel GPT job (application GPTApp, profiles/gpt_pmp): every
// replica is a pipeline of App.Stages GPUs of a type, the job scales in
// whole replicas and its batch is App.MicroBatches per replica. Run checks
// every plan for whole replicas and refuses such a job under a policy that
// does not implement HybridScheduler (ErrHybridUnsupported).
//
// # Where it lives
//
// The simulator is a subpackage of sia because it serves the library's
// policy experiments and its baselines drive package sia; it is not a leaf
// of the module. The policies are subpackages of their own —
// sia/sim/siapolicy (package sia behind the Policy interface, with any
// scheduler of Round's shape), sia/sim/gavel and sia/sim/pollux (the
// paper's baselines) — so that each keeps its options, tests and
// benchmarks, and a program imports only the solvers it runs (Gavel's LP,
// Pollux's genetic search). sia/sim/simtest builds states and jobs directly
// (NewJob, NewState, random snapshots), so that a policy can be unit-tested
// without a trace. The command-line program examples/simulate is built on
// these packages; docs/experiments.md shows a researcher's first
// experiments.
package sim
