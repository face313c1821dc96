// Package placement maps per-job allocations (GPU type and count) onto concrete
// GPUs of nodes, keeping jobs in place where possible and evicting few and small
// jobs on fragmentation.
package placement
