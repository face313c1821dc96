// Package sia composes the leaves of this module into Sia's scheduling round
// (SOSP '23): given a Snapshot of the cluster and its jobs it builds the
// restart-discounted goodput matrix, solves the allocation exactly and places
// it onto nodes, returning a Plan.
//
// # Embedding
//
// The library is a pure function of its inputs, in the manner of etcd's raft
// RawNode: the host owns all state, does all I/O and keeps the clock. Each
// round (60 s by default in the paper) the host
//
//  1. builds a Snapshot: Now, the nodes, and every active job with its
//     current Allocation (type, shape, GPUs), restart count, whether it is
//     in a checkpoint-restore, and its Models — usually a
//     *bootstrap.Tracker the host keeps per job;
//  2. calls Scheduler.Round and applies the Plan: per job an Action (Keep,
//     Start, Resize, Move, Migrate, Preempt, Queue), the GPUs to use and the
//     batch size (LocalBatch, AccumSteps);
//  3. reports what the jobs measured back into their trackers
//     (bootstrap.Tracker.Observe: nodes, replicas, per-GPU batch, step and
//     sync time, gradient statistics), which refit only on new observation
//     keys, and updates JobState (Current, Restarts, Restoring,
//     PeakReplicas) for the next snapshot.
//
// The steps are also exported on their own, for hosts that want them
// piecemeal: BuildMatrix (goodput matrix), Solve (allocation, package ilp),
// Place (placement, package placement); Round only composes them.
//
// # Deadlines, reasons and bad input
//
// Every round has a deadline (ctx's, or Options.RoundTimeout, default 5 s):
// Round returns by it plus max(2 ms, 10 %) with the best plan found, which a
// tight deadline lowers in quality but never freezes (see Scheduler.Round).
// Every job that gets no GPUs carries a Decision.Reason. Types a job may not
// use (Job.Types, bootstrap.Excluded) are never offered. Snapshots and
// options that break a rule are errors naming the job, node, type and field
// (see Snapshot.Validate); counts near MaxInt and values that would overflow
// are errors or handled exactly, never wrapped around.
//
// # Defaults and variants
//
// Options' zero value means the paper's settings: p = −0.5 (minimised), λ =
// 1.1, scale-up factor 2, at most 64 GPUs per job, restart penalty S = 30 s,
// exact values (Variant Paper). Variant Artifact (or the individual
// ArtifactKnobs) reproduces the published artifact: fillers of 1e-4, values
// rounded to 0.01 and clipped at 3000, r = 1 while a job is younger than S,
// per-model restart penalties, and a type-blind first placement.
//
// # Determinism and concurrency
//
// The same snapshot and options give the same plan (apart from Plan.Timings)
// unless the round's deadline cuts it short (then Plan.Status is
// ilp.Feasible and how much was done depends on the machine's speed):
// iteration follows snapshot and cluster order, never map order, and ties
// are broken by Options.Seed. The package starts no goroutines unless asked
// to (Options.Parallelism builds the matrix on several, with the same
// result); Round may be called concurrently on distinct snapshots.
package sia
