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
//     keys, and calls JobState.Advance with each job's Decision (or
//     Snapshot.Advance with the whole plan): the library's bookkeeping of
//     Current, Restarts, PeakReplicas and the restore that pins a job
//     (RestoreUntil), so that the host counts nothing itself. After nodes
//     fail or leave, Snapshot.DropDepartedNodes queues the jobs that held
//     GPUs on them.
//
// The names a host learns, in the order it meets them: Scheduler (New,
// Round) and its Options; the Snapshot (its Nodes, the Jobs, each
// with its Kind, Models and JobState, whose Current Allocation lists GPUs;
// optional Quotas); the Plan, one Decision per job (an Action, a
// QueueReason when it gets no GPUs) and a Status. Errors are an *InputError
// or an *InfeasibleError; Options.Observer receives an Event per Stage;
// Options.Artifact takes ArtifactKnobs; Evaluator is an optional extension of
// Models.
//
// Snapshot, JobState and Plan round-trip through encoding/json (a job's
// Models when they are a *bootstrap.Tracker or bootstrap.Static), so a host
// can persist its state and replay a round: the replay gives the same plan.
//
// A policy experiment changes what a round values through one hook,
// Scheduler.WithGoodputEdit: it sees each configuration offered to a job with
// its normalised goodput and returns the goodput to use; the round recomputes
// everything that follows from it. The round's steps themselves (goodput
// matrix, allocation by package ilp, placement by package placement) are not
// exported: Round composes them.
//
// # Bounds, scale-up and hybrid-parallel jobs
//
// A job is offered configurations with MinGPUs ≤ GPUs ≤ min(MaxGPUs,
// Options.MaxGPUsPerJob) (when these bounds hold no configuration size of a
// type, 3 GPUs exactly on 8-GPU nodes say, the type offers the smallest count
// in them shaped as a rigid job's, see "Node shapes"); its goodput is
// normalised so that its smallest configuration is worth MinGPUs (§3.3). An adaptive job is offered at most
// ScaleUpFactor (2) × JobState.PeakReplicas replicas, never below its minimum
// nor below the type's next configuration size above the peak (on a 7-GPU
// node the sizes are 1 and 7: a job grows from 1 to 7 in one round, or it
// could never grow): a job that never ran starts on one replica and grows at
// most twofold per round where the sizes allow (Options.NoScaleUpCap turns
// this off). A hybrid-parallel (pipeline) job
// uses a tracker built with bootstrap.Spec.Stages (its GPUs per replica, the
// pipeline stages, per GPU type; the only types it can use) and
// Spec.MicroBatches (m): the job's replica size on a type is its model's
// goodput.Model.Stages, and it takes GPUs in whole replicas. It is seeded and
// observed per pipeline replica with LocalBatch 1, and its
// decisions read Replicas pipelines (a pipeline may span nodes, so
// Replicas may be below Allocation.Nodes; the host reports exactly that
// shape to the tracker, and the round predicts it with the multi-node
// network term that the fit of such observations estimates), LocalBatch 1 and AccumSteps m − 1 (m
// micro-batches per step, GlobalBatch = m × Replicas). For data-parallel jobs
// LocalBatch is the per-GPU batch and AccumSteps the extra gradient
// accumulation steps of one optimiser step. A strong-scaling or rigid job
// runs at its fixed batch (goodput.Model.FixedBatch, from
// bootstrap.Spec.FixedBatch); MaxBatch only bounds an adaptive job's batch.
//
// # Node shapes
//
// Nodes may have any number of GPUs, and one GPU type may mix node sizes.
// The paper (§3.1) offers a job powers of two GPUs within one node and whole
// nodes across nodes, so that any allocation whose GPUs fit a type's capacity
// can be placed. What makes that work is that the single-node sizes form a
// divisible chain ending at the node size (each divides the next): packed
// largest first, such sizes never strand room while the total fits. The
// round keeps exactly that property for every node size (package
// configset): a node of R GPUs offers the chain configset.Chain(R) — the
// paper's 1, 2, 4, …, R when R is a power of two, 1, 2, 6 for 6-GPU nodes,
// 1, 2, 4, 12 for 12-GPU nodes, 1, 5 for 5-GPU nodes — and multi-node
// configurations are whole nodes. Sizes off the chain (4 GPUs of a 6-GPU
// node) are not offered: with them, whether an allocation fits depends on
// more than its GPU total.
//
// The nodes of one type and size form a pool, and the allocation problem has
// one capacity row per pool; a type with 8- and 6-GPU nodes has the pools
// "a100/8" and "a100/6" (configset.Config.Pool), whose entries carry the
// type's goodput for their shape. A reservation or quota on such a type is a
// row over the set of its pools. A job whose minimum no pool holds (a rigid
// count above the type's largest pool, say 28 GPUs of a type with nodes of
// 8, 8, 6 and 6 GPUs, or a MinGPUs of 20 there) is offered configurations
// spanning the pools (configset.Set.Span: the fewest nodes, whole nodes and
// at most one remainder; configset.Config.Parts), at most four per type;
// so is a running job's current allocation on nodes of several sizes. Each
// such entry uses a row per pool it touches, which the solver's options
// cannot say: Solve enumerates the few jobs with spanning entries exactly
// (each branch fixes their choice and takes its GPUs off the pools and
// quotas, ilp.Solve does the rest, the best branch wins), up to 64 branches
// (beyond, the later jobs' spanning entries are not taken and the answer is
// Feasible with a widened bound). Adaptive jobs that fit a pool are not
// offered spanning entries, so they never grow beyond the type's largest
// pool. A rigid job whose count is no configuration
// is shaped as whole nodes plus its remainder on one more node (9 GPUs on
// 6-GPU nodes: 6 + 3, on 2 nodes) and counts, against its pool, the
// smallest chain size that holds the remainder (the 3 GPUs
// count 6), so every allocation the solver returns is placeable. Placement
// places each job in its entry's pool and on its entry's node count: the
// shape in the Plan is the shape whose goodput was predicted. If pinned jobs
// fragment the nodes so that a running job's new allocation cannot be
// placed, the job keeps its current allocation when its GPUs are still free
// (Decision.Kept) instead of losing them.
//
// A charge above a configuration's GPUs blocks GPUs no job uses (10 of 30
// beside a rigid 5 and a rigid 15 on two 15-GPU nodes). After placement a
// fill step starts waiting jobs on such idle GPUs, and gives a job the
// solver preempted its current GPUs back when they stay idle: best value
// per GPU first, by the matrix's values, each on an entry of its row placed
// exactly with that entry's shape, within its quotas and its type's
// reservation (counted by GPUs held, not charges); jobs that hold GPUs,
// pinned or not, are not touched, and a round with no time left fills
// nothing. A job that still waits beside idle GPUs of its type that hold its
// count (a rigid job's, an adaptive job's smallest), in no shape it was
// offered — nodes of 15 and 4 GPUs running a rigid 9 on the 15 leave 6 + 4
// idle beside a waiting rigid 10; pinned jobs holding half of each of two
// 6-GPU nodes leave 3 + 3 beside a rigid 6 — is then started on a shape of
// those idle GPUs (as few nodes as they allow, each part in whole
// replicas), valued as its row is for that shape's node count and marked
// Shaped in its row; a job the solver preempted may restart on one too,
// valued with its restart factor. So no GPU is idle by construction beside
// a job that fits it. Such a plan goes beyond the problem the solver
// solved: its Objective is the plan's, its Bound the bound of the
// uncharged relaxation (every configuration, shaped ones included,
// counting its GPUs; a shaped one over several pools counts its best gain
// over waiting), which holds every placeable plan, and its Status is
// StatusFeasible, or StatusOptimal when that relaxation's proven optimum
// equals the plan's objective (see Plan.Status).
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
// exact values (Options.Artifact nil). PublishedArtifact (or the individual
// ArtifactKnobs) reproduces the published artifact: fillers of 1e-4, values
// rounded to 0.01 and clipped at 3000, r = 1 while a job is younger than S,
// per-model restart penalties, and a type-blind first placement.
//
// # Determinism and concurrency
//
// The same snapshot and options give the same plan
// unless the round's deadline cuts it short (then Plan.Status is
// StatusFeasible and how much was done depends on the machine's speed):
// iteration follows snapshot and cluster order, never map order, and ties
// are broken by Options.Seed. The package starts no goroutines unless asked
// to (Options.Parallelism validates the jobs and builds the matrix on
// several, with the same result); Round may be called concurrently on distinct snapshots.
package sia
