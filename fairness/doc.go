// Package fairness computes finish-time fairness (FTF) for jobs on heterogeneous
// clusters: per-job ratios, the worst ratio, the unfair fraction and CDF points.
//
// A job's ratio is ρ = T_shared / T_fair, where T_fair is its completion time
// alone on its fair share of the cluster, N_gpus / N_avg GPUs with N_avg the
// average number of contending jobs (paper §5.5, design §7). On a heterogeneous
// cluster ρ = Σ_g (N_g / N_total) · ρ_g with ρ_g computed on type g only (paper
// Eq. 6); Options selects the published artifact's variants instead. The
// package is pure arithmetic: the caller supplies the shared completion times
// and the isolated ones (measured, simulated or estimated).
//
// The package is a leaf: it imports nothing else of this module.
package fairness
