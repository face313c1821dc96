// Package goodput implements the Pollux goodput model used by Sia: the
// seven-parameter throughput model, statistical efficiency from gradient
// statistics, the batch-size and accumulation search, the hybrid-parallel
// variant, and fitting of throughput parameters from observations.
//
// # Throughput
//
// Params holds (αc, βc, αn, βn, αr, βr, γ) of one job on one GPU type. For n
// nodes, r replicas, per-GPU batch b and s extra accumulation steps:
//
//	T_acc  = αc + βc·b
//	T_net  = αn + βn·max(r−2, ε) across nodes, αr + βr·max(r−2, ε) inside one node, ≈ 0 for r = 1
//	T_sync = (T_acc^γ + T_net^γ)^(1/γ)
//	T_iter = s·T_acc + T_sync,   X = r·b·(s+1) / T_iter samples/s
//
// # Statistical efficiency and goodput
//
// With gradient statistics (|g|², tr Σ) measured at the initial batch M0 and
// scale = M/M0, gain = (var + sqr)/(var/scale + sqr) and Efficiency =
// gain/scale, so E(M0) = 1 and E falls with M. Goodput = X·E.
//
// Model.Best searches the batch size and accumulation steps with the highest
// goodput for a configuration, on the published artifact's 50-point geometric
// grid and with its accumulation and rounding rules, under the GPU type's
// per-GPU memory limits (Limits) and the job's maximum batch size. Hybrid
// (pipeline-parallel) jobs use T = 3((P−1)+m)·T_acc(1) + T_net and X = m·r/T;
// a pipeline may span nodes (fewer replicas than nodes, CoversNodes), and is
// then predicted and fitted with the multi-node network term.
//
// # Fitting
//
// Fit estimates Params from observed step and sync times by minimising
// RMSE(log T_acc) + RMSE(log T_sync) + 10⁻³(γ−1)² + 10⁻²((βn/αn)² + (βr/αr)²)
// under the design's bounds and pinning rules. Bounds are enforced by a
// reparameterisation (ε + exp(u) for times, 1 + 9·sin²(v/2) for γ), and the
// optimiser is L-BFGS from gonum's optimize package, run from several
// starting points. Fits are deterministic.
//
// # Validation
//
// Params, GradStats, Limits and Model have Validate methods whose errors wrap
// ErrInvalidInput and name the field (Model.Limits.MinLocalBatch, …); Fit
// and Loss reject bad observations with an *ObservationError giving the
// index and field, and bad FitOptions. Best answers false for an invalid
// model or configuration. The formula functions (AccumTime, NetTime,
// SyncTime, IterTime, Throughput, Gain, Efficiency, Model.Evaluate) do not
// validate their arguments; they never panic, and are finite and positive for
// valid ones.
//
// Nothing in the package does I/O, keeps state between calls or starts
// goroutines; every function is safe for concurrent use.
package goodput
