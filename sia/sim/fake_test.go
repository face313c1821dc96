package sim

import (
	"context"

	"github.com/sia-sched/sia/goodput"
)

// toyTruth is a ground truth with round numbers: one application "toy" with
// M0 = max batch = 10, 2 epochs of 100 progress each, 30 s restart delay,
// 1 s per step on any placement of type "a" or "b" (so 1 progress/s).
type toyTruth struct{ step float64 }

func (t toyTruth) Name() string { return "toy" }
func (t toyTruth) App(name string) (*App, bool) {
	if name != "toy" {
		return nil, false
	}
	return &App{Name: "toy", InitBatch: 10, MaxBatch: 10, MaxEpochs: 2, RestartDelay: 30, Slowdown: 1, RestartCost: 30}, true
}
func (t toyTruth) Supports(app, typ string) bool               { return app == "toy" && (typ == "a" || typ == "b") }
func (t toyTruth) LocalRange(app, typ string) (int, int)       { return 1, 10 }
func (t toyTruth) PlacementMaxLocal(string, string, []int) int { return 10 }
func (t toyTruth) ReplicaMaxLocal(string, string, int) (int, bool) {
	return 10, true
}
func (t toyTruth) StepTime(app, typ string, shape []int, local int) (float64, float64, bool) {
	s := t.step
	if s == 0 {
		s = 1
	}
	return s, 0, true
}
func (t toyTruth) GradStats(string, float64, int) goodput.GradStats { return goodput.GradStats{Sqr: 1} }
func (t toyTruth) Progress(app string, epoch int) float64           { return 100 * float64(epoch) }
func (t toyTruth) Iterations(string, float64, int) float64          { return 0 }
func (t toyTruth) Xput1(string, string) float64                     { return 10 }
func (t toyTruth) Profile(string, string, int, int) []goodput.Observation {
	return nil
}
func (t toyTruth) SeedProfile(string, string) []goodput.Observation { return nil }

// scripted returns allocations from a function of the round's time.
type scripted func(now float64, jobs []*Job) map[string]Alloc

func (s scripted) Name() string { return "scripted" }
func (s scripted) Schedule(_ context.Context, st *State) (map[string]Alloc, error) {
	return s(st.Now, st.Jobs), nil
}

var toyCluster = Cluster{Groups: []NodeGroup{{Type: "a", Nodes: 2, GPUsPerNode: 4}, {Type: "b", Nodes: 1, GPUsPerNode: 4}}}
