// Package bootstrap manages the life cycle of a job's per-GPU-type throughput
// models: seeding from 1-GPU profiles, cross-type projection, online refinement,
// and the profile file readers that feed them.
package bootstrap
