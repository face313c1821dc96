// Package goodput implements the Pollux goodput model used by Sia: the
// seven-parameter throughput model, statistical efficiency from gradient
// statistics, the batch-size and accumulation search, the hybrid-parallel
// variant, and fitting of throughput parameters from observations.
package goodput
