// Package configset enumerates the valid configurations (nodes, GPUs, type) of a
// heterogeneous cluster, including virtual nodes for per-node GPU counts that are
// not powers of two, and filters them per job.
package configset
