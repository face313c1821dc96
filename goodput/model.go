package goodput

import (
	"fmt"
	"math"
)

// GridPoints is the number of candidate global batch sizes the batch-size
// search evaluates per configuration (numpy.geomspace's default in the
// published artifact).
const GridPoints = 50

// Limits are the per-GPU batch-size bounds of a job on one GPU type: the
// smallest useful per-GPU batch and the largest one that fits in the GPU's
// memory.
type Limits struct {
	MinLocalBatch, MaxLocalBatch int
}

// MaxBatchSize bounds every batch size and count a Model accepts (InitBatch,
// MaxBatch, Limits.MaxLocalBatch, Stages, MicroBatches), so that products of
// batch sizes and replica counts in the batch-size search cannot overflow an
// int and stay exact in float64.
const MaxBatchSize = 1 << 40

// Validate reports whether 1 ≤ MinLocalBatch ≤ MaxLocalBatch ≤ MaxBatchSize.
func (l Limits) Validate() error { return l.check("Limits") }

func (l Limits) check(prefix string) error {
	if l.MinLocalBatch < 1 {
		return fmt.Errorf("%w: %s.MinLocalBatch = %d, want >= 1", ErrInvalidInput, prefix, l.MinLocalBatch)
	}
	if l.MaxLocalBatch < l.MinLocalBatch {
		return fmt.Errorf("%w: %s.MaxLocalBatch = %d is below MinLocalBatch = %d", ErrInvalidInput, prefix, l.MaxLocalBatch, l.MinLocalBatch)
	}
	if l.MaxLocalBatch > MaxBatchSize {
		return fmt.Errorf("%w: %s.MaxLocalBatch = %d, want <= MaxBatchSize = %d", ErrInvalidInput, prefix, l.MaxLocalBatch, MaxBatchSize)
	}
	return nil
}

// Model holds everything needed to evaluate the goodput of a job on one GPU
// type: its throughput parameters on that type, its gradient statistics, its
// batch-size range and the type's per-GPU memory limits.
//
// A Model with Stages > 0 and MicroBatches > 0 is a hybrid-parallel
// (pipeline) job: each data-parallel replica is a pipeline of Stages GPUs that
// runs MicroBatches micro-batches of one sample per optimizer step. Its batch
// size is never tuned and Limits are not used.
type Model struct {
	// Params are the job's throughput parameters on this GPU type.
	Params Params
	// Grad are the job's current gradient statistics (measured at InitBatch).
	Grad GradStats
	// InitBatch is M0, the job's initial (smallest) global batch size.
	InitBatch int
	// MaxBatch is the largest global batch size an adaptive job may use
	// (the batch search's upper end; for a hybrid-parallel job the bound of
	// MicroBatches × replicas). Ignored for a data-parallel job with a
	// FixedBatch.
	MaxBatch int
	// Limits are the per-GPU batch bounds on this GPU type.
	Limits Limits
	// FixedBatch is the global batch size of a strong-scaling or rigid job,
	// which the scheduler does not tune: only FixedBatch is evaluated (with
	// accumulation if memory requires it). 0 means adaptive: the batch is
	// chosen in [InitBatch, MaxBatch].
	FixedBatch int
	// Stages is the number of pipeline stages per replica (hybrid-parallel
	// jobs); zero means plain data parallel.
	Stages int
	// MicroBatches is the number of size-1 micro-batches each pipeline replica
	// runs per optimizer step (hybrid-parallel jobs only).
	MicroBatches int
}

// Choice is the outcome of the batch-size search for one configuration.
type Choice struct {
	// Goodput = Throughput × Efficiency, in M0-equivalent samples per second.
	Goodput float64
	// Throughput in samples per second.
	Throughput float64
	// Efficiency is the statistical efficiency of GlobalBatch.
	Efficiency float64
	// LocalBatch is the per-GPU micro-batch size b.
	LocalBatch int
	// AccumSteps is s, the number of extra accumulation micro-batches.
	AccumSteps int
	// GlobalBatch = replicas × LocalBatch × (AccumSteps+1).
	GlobalBatch int
}

// checkBatches checks InitBatch ≤ FixedBatch ≤ MaxBatchSize for a fixed
// batch, and InitBatch ≤ MaxBatch ≤ MaxBatchSize for an adaptive or
// hybrid-parallel job.
func (m Model) checkBatches() error {
	switch {
	case m.FixedBatch < 0:
		return fmt.Errorf("%w: Model.FixedBatch = %d, want >= 0 (0: adaptive)", ErrInvalidInput, m.FixedBatch)
	case m.FixedBatch > 0 && m.FixedBatch < m.InitBatch:
		return fmt.Errorf("%w: Model.FixedBatch = %d is below InitBatch = %d", ErrInvalidInput, m.FixedBatch, m.InitBatch)
	case m.FixedBatch > MaxBatchSize:
		return fmt.Errorf("%w: Model.FixedBatch = %d, want <= MaxBatchSize = %d", ErrInvalidInput, m.FixedBatch, MaxBatchSize)
	case m.FixedBatch > 0 && !m.Hybrid():
		return nil
	case m.MaxBatch < m.InitBatch:
		return fmt.Errorf("%w: Model.MaxBatch = %d is below InitBatch = %d", ErrInvalidInput, m.MaxBatch, m.InitBatch)
	case m.MaxBatch > MaxBatchSize:
		return fmt.Errorf("%w: Model.MaxBatch = %d, want <= MaxBatchSize = %d", ErrInvalidInput, m.MaxBatch, MaxBatchSize)
	}
	return nil
}

// batchRange returns the global batches the data-parallel search considers:
// [lo, hi] over replicas, a single point (fixed) for a fixed batch.
func (m *Model) batchRange(replicas int) (lo, hi float64, fixed bool) {
	lo = math.Max(float64(m.InitBatch), float64(m.Limits.MinLocalBatch)*float64(replicas))
	if m.FixedBatch > 0 {
		return lo, float64(m.FixedBatch), true
	}
	return lo, float64(m.MaxBatch), false
}

// Hybrid reports whether m describes a hybrid-parallel (pipeline) job.
func (m Model) Hybrid() bool { return m.Stages > 0 || m.MicroBatches > 0 }

// Validate reports whether m can be evaluated: valid Params and Grad,
// 1 ≤ InitBatch ≤ FixedBatch ≤ MaxBatchSize for a fixed batch, else
// InitBatch ≤ MaxBatch ≤ MaxBatchSize, and either valid Limits (data
// parallel) or Stages and MicroBatches in [1, MaxBatchSize] (hybrid
// parallel). The error names the offending field (as Model.Params.AlphaC,
// Model.Limits.MinLocalBatch, …) and wraps ErrInvalidInput.
func (m Model) Validate() error {
	if err := m.Params.check("Model.Params"); err != nil {
		return err
	}
	if err := m.Grad.check("Model.Grad"); err != nil {
		return err
	}
	if m.InitBatch < 1 {
		return fmt.Errorf("%w: Model.InitBatch = %d, want >= 1", ErrInvalidInput, m.InitBatch)
	}
	if err := m.checkBatches(); err != nil {
		return err
	}
	if m.Hybrid() {
		if m.Stages < 1 || m.MicroBatches < 1 {
			return fmt.Errorf("%w: Model.Stages = %d and Model.MicroBatches = %d, want both >= 1 for a hybrid-parallel job (or both 0)",
				ErrInvalidInput, m.Stages, m.MicroBatches)
		}
		if m.Stages > MaxBatchSize {
			return fmt.Errorf("%w: Model.Stages = %d, want <= MaxBatchSize = %d", ErrInvalidInput, m.Stages, MaxBatchSize)
		}
		if m.MicroBatches > MaxBatchSize {
			return fmt.Errorf("%w: Model.MicroBatches = %d, want <= MaxBatchSize = %d", ErrInvalidInput, m.MicroBatches, MaxBatchSize)
		}
		return nil
	}
	if err := m.Limits.check("Model.Limits"); err != nil {
		return err
	}
	return nil
}

// Evaluate returns the goodput, throughput and efficiency of running with the
// given per-GPU batch and accumulation steps, without checking limits. The
// global batch is replicas·localBatch·(accumSteps+1).
func (m Model) Evaluate(nodes, replicas, localBatch, accumSteps int) Choice {
	b := float64(localBatch)
	global := replicas * localBatch * (accumSteps + 1)
	x := m.Params.Throughput(nodes, replicas, b, accumSteps)
	e := Efficiency(m.Grad, float64(m.InitBatch), float64(global))
	return Choice{Goodput: x * e, Throughput: x, Efficiency: e, LocalBatch: localBatch, AccumSteps: accumSteps, GlobalBatch: global}
}

// Best returns the batch size and accumulation steps with the highest goodput
// for nodes nodes and replicas data-parallel replicas (pipeline replicas for a
// hybrid-parallel job), or false when no batch size is feasible (or the model
// or configuration is invalid).
//
// Data-parallel search (the published artifact's GoodputFunction.optimize):
// candidate global batches are a 50-point geometric grid from
// max(InitBatch, MinLocalBatch·replicas) to MaxBatch (only FixedBatch when
// it is set). For a candidate M with local = M/replicas:
//
//	s = ceil(local/MaxLocalBatch − 1e-8) − 1, and s ≥ 1 when replicas = 1 and local > M0
//	b = ceil(local/(s+1) − 1e-8)
//
// so that a single GPU accumulates at least two micro-batches (needed to
// measure gradient statistics). Candidates with b outside the limits are
// rejected; the first candidate with the highest goodput wins. Because b is
// rounded up, GlobalBatch may exceed MaxBatch (or FixedBatch) by less than
// replicas·(s+1) samples, exactly as in the artifact.
//
// Hybrid-parallel jobs (Stages = k, MicroBatches = m): T = 3((k−1)+m)·T_acc(1)
// + T_net(nodes, replicas), throughput m·replicas/T, global batch
// m·replicas, which must not exceed MaxBatch. A pipeline may span nodes, so
// replicas may be below nodes as long as nodes <= replicas·k (CoversNodes);
// T_net is then the network term of several nodes, the one Fit fits on
// observations of that shape (Observation.Stages).
//
// A Searcher gives the same result faster over many calls (it caches the
// grids); SplitBatch is the rounding of a global batch on its own.
func (m Model) Best(nodes, replicas int) (Choice, bool) {
	if !m.covers(nodes, replicas) || m.Validate() != nil {
		return Choice{}, false
	}
	if m.Hybrid() {
		return m.bestHybrid(nodes, replicas)
	}
	var s Searcher
	return s.best(&m, nodes, replicas)
}

// covers reports whether replicas of m's replica size can span nodes
// nodes (CoversNodes with the model's pipeline stages).
func (m *Model) covers(nodes, replicas int) bool {
	stages := 0
	if m.Hybrid() {
		stages = m.Stages
	}
	return CoversNodes(nodes, replicas, stages)
}

func (m Model) bestHybrid(nodes, replicas int) (Choice, bool) {
	if replicas > m.MaxBatch/m.MicroBatches { // global batch above MaxBatch (checked without overflow)
		return Choice{}, false
	}
	global := m.MicroBatches * replicas
	fwd := m.Params.AccumTime(1)
	t := 3*float64(m.Stages-1+m.MicroBatches)*fwd + m.Params.NetTime(nodes, replicas)
	x := float64(global) / t
	e := Efficiency(m.Grad, float64(m.InitBatch), float64(global))
	return Choice{Goodput: x * e, Throughput: x, Efficiency: e, LocalBatch: 1, AccumSteps: m.MicroBatches - 1, GlobalBatch: global}, true
}
