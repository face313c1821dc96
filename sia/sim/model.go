package sim

import (
	"math"
	"sort"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/catalog"
)

// ModelTruth is the "model" ground truth: the built-in catalog of numbers
// derived from the profiles (package catalog). Step times come from the
// fitted throughput model of each application and GPU type, gradient
// statistics from the fitted noise curve; it needs no data folder.
type ModelTruth struct {
	cat  *catalog.Catalog
	apps map[string]*App
}

// LoadModel returns the built-in ground truth.
func LoadModel() (*ModelTruth, error) {
	c, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	m := &ModelTruth{cat: c, apps: map[string]*App{}}
	for name, a := range c.Apps {
		m.apps[name] = &App{Name: name, InitBatch: a.InitBatch, MaxBatch: a.MaxBatch, MaxEpochs: a.MaxEpochs,
			RestartDelay: a.RestartDelay, Slowdown: a.Slowdown, RestartCost: a.RestartCost}
	}
	return m, nil
}

// Name implements Truth.
func (m *ModelTruth) Name() string { return "model" }

// App implements Truth.
func (m *ModelTruth) App(name string) (*App, bool) {
	a, ok := m.apps[name]
	return a, ok
}

func (m *ModelTruth) typ(app, typ string) (catalog.Type, bool) {
	a, ok := m.cat.Apps[app]
	if !ok {
		return catalog.Type{}, false
	}
	t, ok := a.Types[typ]
	return t, ok
}

// Supports implements Truth.
func (m *ModelTruth) Supports(app, typ string) bool {
	_, ok := m.typ(app, typ)
	return ok
}

// LocalRange implements Truth.
func (m *ModelTruth) LocalRange(app, typ string) (int, int) {
	t, _ := m.typ(app, typ)
	return t.MinLocal, t.MaxLocal
}

// PlacementMaxLocal implements Truth: the type's memory limit.
func (m *ModelTruth) PlacementMaxLocal(app, typ string, shape []int) int {
	t, _ := m.typ(app, typ)
	return t.MaxLocal
}

// ReplicaMaxLocal implements Truth: the type's memory limit.
func (m *ModelTruth) ReplicaMaxLocal(app, typ string, replicas int) (int, bool) {
	t, ok := m.typ(app, typ)
	return t.MaxLocal, ok
}

// StepTime implements Truth: T_sync of the fitted model; the sync part is
// T_sync − T_acc.
func (m *ModelTruth) StepTime(app, typ string, shape []int, local int) (float64, float64, bool) {
	t, ok := m.typ(app, typ)
	if !ok || len(shape) == 0 || local <= 0 {
		return 0, 0, false
	}
	n, r := len(shape), sum(shape)
	step := t.Params.IterTime(n, r, float64(local), 0)
	acc := t.Params.AccumTime(float64(local))
	return step, math.Max(step-acc, 0), step > 0
}

// GradStats implements Truth: Sqr = 1 and Var = the fitted noise ratio.
func (m *ModelTruth) GradStats(app string, batch float64, epoch int) goodput.GradStats {
	a, ok := m.cat.Apps[app]
	if !ok {
		return goodput.GradStats{}
	}
	return goodput.GradStats{Sqr: 1, Var: a.NoiseRatio(epoch, batch)}
}

// Progress implements Truth.
func (m *ModelTruth) Progress(app string, epoch int) float64 {
	a, ok := m.cat.Apps[app]
	if !ok || epoch <= 0 {
		return 0
	}
	return a.Progress[clampEpoch(epoch-1, len(a.Progress))]
}

// Iterations implements Truth: an estimate, progress × M0 / batch (the
// catalog does not keep per-batch iteration counts; only Gavel's
// finish-time-fairness variant would use them).
func (m *ModelTruth) Iterations(app string, batch float64, epoch int) float64 {
	a, ok := m.cat.Apps[app]
	if !ok || batch <= 0 {
		return 0
	}
	return m.Progress(app, epoch+1) * float64(a.InitBatch) / batch
}

// Xput1 implements Truth.
func (m *ModelTruth) Xput1(app, typ string) float64 {
	t, _ := m.typ(app, typ)
	return t.Xput1
}

// modelBatches returns about ten per-GPU batch sizes on a geometric grid
// between the type's limits.
func modelBatches(lo, hi int) []int {
	lo = max(lo, 1)
	hi = max(hi, lo)
	var out []int
	for i := 0; i < 10; i++ {
		b := int(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), float64(i)/9)))
		if len(out) == 0 || b != out[len(out)-1] {
			out = append(out, b)
		}
	}
	return out
}

// Profile implements Truth: the fitted model evaluated on the
// configurations a profiling campaign covers (1 node: powers of two up to
// 8 GPUs; k nodes: 4k and 8k GPUs, k ≤ 16), about ten batch sizes each.
func (m *ModelTruth) Profile(app, typ string, maxNodes, maxReplicas int) []goodput.Observation {
	t, ok := m.typ(app, typ)
	if !ok {
		return nil
	}
	type nr struct{ n, r int }
	var cfgs []nr
	for r := 1; r <= 8; r *= 2 {
		cfgs = append(cfgs, nr{1, r})
	}
	for k := 2; k <= 16; k++ {
		cfgs = append(cfgs, nr{k, 4 * k}, nr{k, 8 * k})
	}
	sort.Slice(cfgs, func(a, b int) bool {
		if cfgs[a].n != cfgs[b].n {
			return cfgs[a].n < cfgs[b].n
		}
		return cfgs[a].r < cfgs[b].r
	})
	var out []goodput.Observation
	for _, c := range cfgs {
		if (maxNodes > 0 && c.n > maxNodes) || (maxReplicas > 0 && c.r > maxReplicas) {
			continue
		}
		for _, b := range modelBatches(t.MinLocal, t.MaxLocal) {
			shape := make([]int, c.n)
			for i := range shape {
				shape[i] = c.r / c.n
			}
			step, sync, _ := m.StepTime(app, typ, shape, b)
			out = append(out, goodput.Observation{Nodes: c.n, Replicas: c.r, LocalBatch: b, StepTime: step, SyncTime: sync})
		}
	}
	return out
}

// SeedProfile implements Truth: the fitted model on one GPU over about ten
// batch sizes.
func (m *ModelTruth) SeedProfile(app, typ string) []goodput.Observation {
	return m.Profile(app, typ, 1, 1)
}
