// Package bootstrap manages the life cycle of a job's per-GPU-type throughput
// models (paper §3.2) and reads the profile files that feed
// them.
//
// A host keeps one Tracker per job, between scheduling rounds:
//
//   - New(spec, opts) with the job's batch range and per-type memory limits;
//   - Seed each GPU type with the 1-GPU profiles collected at submission
//     (several batch sizes; ReadSeedFile reads the seed-profiles format). A
//     fit on 1-GPU data has no network cost, so the first multi-GPU step
//     assumes perfect scaling;
//   - Observe what the job reports while it runs (nodes, replicas, per-GPU
//     batch, step and sync time, gradient statistics). Only a new (nodes,
//     replicas, batch) key refits the type (milliseconds); repeated keys and
//     gradient statistics are free;
//   - hand the Tracker to the scheduler as sia.Job.Models; its Model method
//     returns each type's goodput.Model and where it comes from (Source):
//     fitted on the type's own data, or projected from the type with the most
//     multi-GPU evidence as est_B(N) = x_B(1)/x_A(1) · x_A(N), dropped as soon
//     as B has multi-GPU data of its own. A type outside the Spec is
//     Excluded: the job cannot run there and schedulers never offer it,
//     unlike None (no model yet: only its 1-GPU configuration is offered).
//
// Modes reproduce the paper's bootstrapping comparison: Profiled (default,
// the design above), Oracle (every profile known: seed with all rows) and
// NoProfiling (no seeds, no projection; types the job has not run on offer
// only their 1-GPU configuration). Trackers are deterministic, cheap to Clone
// (seed one prototype per application and clone it per job) and serialise
// with encoding/json. Static is a fixed model set for hosts that know every
// throughput.
package bootstrap
