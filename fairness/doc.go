// Package fairness computes finish-time fairness (FTF) for jobs on heterogeneous
// clusters: per-job ratios, the worst ratio, the unfair fraction and CDF points.
package fairness
