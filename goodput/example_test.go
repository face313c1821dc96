package goodput_test

import (
	"fmt"

	"github.com/sia-sched/sia/goodput"
)

// The batch-size search for one configuration: 8 GPUs on one node, with a
// per-GPU memory limit of 256 samples.
func ExampleModel_Best() {
	m := goodput.Model{
		Params:    goodput.Params{AlphaC: 0.02, BetaC: 0.0005, AlphaN: 0.2, BetaN: 0.01, AlphaR: 0.03, BetaR: 0.002, Gamma: 2},
		Grad:      goodput.GradStats{Sqr: 1, Var: 200},
		InitBatch: 128,
		MaxBatch:  4096,
		Limits:    goodput.Limits{MinLocalBatch: 32, MaxLocalBatch: 256},
	}
	c, ok := m.Best(1, 8)
	fmt.Println(ok)
	fmt.Printf("batch %d = 8 GPUs x %d x %d micro-batches\n", c.GlobalBatch, c.LocalBatch, c.AccumSteps+1)
	fmt.Printf("throughput %.0f samples/s, efficiency %.2f, goodput %.0f\n", c.Throughput, c.Efficiency, c.Goodput)
	// Output:
	// true
	// batch 1968 = 8 GPUs x 246 x 1 micro-batches
	// throughput 13204 samples/s, efficiency 0.93, goodput 12323
}

// A strong-scaling job keeps its batch size; when it does not fit in memory
// the search accumulates gradients over several micro-batches.
func ExampleModel_Best_fixedBatch() {
	m := goodput.Model{
		Params:     goodput.Params{AlphaC: 0.02, BetaC: 0.0005, AlphaN: 0.2, BetaN: 0.01, AlphaR: 0.03, BetaR: 0.002, Gamma: 2},
		Grad:       goodput.GradStats{Sqr: 1, Var: 200},
		InitBatch:  128,
		Limits:     goodput.Limits{MinLocalBatch: 32, MaxLocalBatch: 256},
		FixedBatch: 4096,
	}
	for _, r := range []int{4, 8, 16} {
		c, _ := m.Best(1+r/16, r)
		fmt.Printf("%2d GPUs: %d x %d x %d, %.0f samples/s\n", r, r, c.LocalBatch, c.AccumSteps+1, c.Throughput)
	}
	// Output:
	//  4 GPUs: 4 x 256 x 4, 6874 samples/s
	//  8 GPUs: 8 x 256 x 2, 13570 samples/s
	// 16 GPUs: 16 x 256 x 1, 11046 samples/s
}

// Statistical efficiency falls as the batch grows past the initial batch size.
func ExampleEfficiency() {
	g := goodput.GradStats{Sqr: 1, Var: 100} // noise scale φ = M0·100
	for _, m := range []float64{32, 64, 320, 3200} {
		fmt.Printf("M=%4.0f E=%.3f\n", m, goodput.Efficiency(g, 32, m))
	}
	// Output:
	// M=  32 E=1.000
	// M=  64 E=0.990
	// M= 320 E=0.918
	// M=3200 E=0.505
}

// Fitting the seven throughput parameters from measured step times.
func ExampleFit() {
	truth := goodput.Params{AlphaC: 0.05, BetaC: 0.002, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.08, BetaR: 0.01, Gamma: 1.5}
	var obs []goodput.Observation
	for _, cfg := range [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 8}, {4, 16}} {
		for _, b := range []int{16, 32, 64, 128} {
			step := truth.SyncTime(cfg[0], cfg[1], float64(b))
			obs = append(obs, goodput.Observation{Nodes: cfg[0], Replicas: cfg[1], LocalBatch: b,
				StepTime: step, SyncTime: step - truth.AccumTime(float64(b))})
		}
	}
	p, err := goodput.Fit(obs, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("alpha_c %.3f beta_c %.4f gamma %.2f\n", p.AlphaC, p.BetaC, p.Gamma)
	fmt.Printf("predicted step on 2 nodes x 4 GPUs at b=64: %.3f s (true %.3f s)\n",
		p.SyncTime(2, 8, 64), truth.SyncTime(2, 8, 64))
	// Output:
	// alpha_c 0.050 beta_c 0.0020 gamma 1.50
	// predicted step on 2 nodes x 4 GPUs at b=64: 0.494 s (true 0.494 s)
}
