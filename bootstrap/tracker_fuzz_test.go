package bootstrap

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/sia-sched/sia/goodput"
)

// FuzzTrackerJSON: restoring arbitrary bytes never panics, and an accepted
// state round-trips and answers Model for every type.
func FuzzTrackerJSON(f *testing.F) {
	tr, _ := New(testSpec(), nil)
	_ = tr.Seed("fast", obs("fast", 1, 1, 64), obs("fast", 1, 1, 256))
	_, _ = tr.Observe("fast", meas("fast", 1, 2, 64))
	good, _ := json.Marshal(tr)
	f.Add(good)
	f.Add([]byte(`{"spec":{"InitBatch":1,"MaxBatch":2,"Limits":{"x":{"MinLocalBatch":1,"MaxLocalBatch":2}}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr Tracker
		if err := json.Unmarshal(data, &tr); err != nil {
			return
		}
		for _, ty := range tr.Types() {
			m, src := tr.Model(ty)
			if src != None {
				if err := m.Validate(); err != nil {
					t.Fatalf("type %s: %v model is invalid: %v", ty, src, err)
				}
			}
		}
		again, err := json.Marshal(&tr)
		if err != nil {
			t.Fatal(err)
		}
		var back Tracker
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzObserve: arbitrary measurements never panic and never leave an
// invalid model behind.
func FuzzObserve(f *testing.F) {
	f.Add(1, 1, 64, 0.1, 0.01, 1.0, 10.0)
	f.Add(2, 8, 128, 0.5, 0.2, 0.0, 0.0)
	f.Add(0, -1, 0, math.NaN(), math.Inf(1), -1.0, 1.0)
	f.Fuzz(func(t *testing.T, nodes, replicas, b int, step, sync, sqr, vr float64) {
		tr, err := New(testSpec(), nil)
		if err != nil {
			t.Fatal(err)
		}
		seedAll(t, tr)
		g := goodput.GradStats{Sqr: sqr, Var: vr}
		_, _ = tr.Observe("mid", Measurement{Nodes: nodes, Replicas: replicas, LocalBatch: b, StepTime: step, SyncTime: sync, Grad: &g})
		for _, ty := range tr.Types() {
			m, src := tr.Model(ty)
			if src == None {
				t.Fatalf("type %s lost its model", ty)
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("type %s: invalid model: %v", ty, err)
			}
		}
	})
}
