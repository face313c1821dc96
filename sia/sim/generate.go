package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// requestMix is the job mix of the Helios ("saturn") traces: application,
// requested GPUs and batch size, and how many of the 800 jobs of workloads
// 1–5 made that request (the published artifact's workloads).
var requestMix = []struct {
	app             string
	replicas, batch int
	weight          float64
}{
	{"bert", 6, 384, 9}, {"bert", 8, 384, 4}, {"bert", 12, 384, 8}, {"bert", 16, 384, 9},
	{"cifar10", 4, 2048, 77}, {"cifar10", 6, 2048, 143}, {"cifar10", 8, 2048, 60},
	{"cifar10", 8, 4096, 53}, {"cifar10", 10, 4096, 100}, {"cifar10", 12, 4096, 145}, {"cifar10", 16, 4096, 89},
	{"deepspeech2", 6, 320, 13}, {"deepspeech2", 8, 320, 19}, {"deepspeech2", 12, 640, 13},
	{"imagenet", 10, 1600, 4}, {"imagenet", 12, 3200, 6}, {"imagenet", 14, 3200, 11},
	{"yolov3", 4, 64, 37},
}

// Generate returns a Helios-like workload: Poisson arrivals at rate jobs per
// hour over the given hours, each job drawn from the Helios request mix.
// The same seed gives the same workload.
func Generate(seed uint64, hours, rate float64) (*Workload, error) {
	if !(hours > 0) || hours*3600 > MaxSubmit {
		return nil, inputErr("", 0, "", "hours", "%v, want more than 0 and at most %d hours", hours, MaxSubmit/3600)
	}
	if !(rate > 0) || math.IsInf(rate, 0) || hours*rate > 1e6 {
		return nil, inputErr("", 0, "", "rate", "need a positive number of jobs per hour (at most 1e6 jobs), got %v h at %v/h", hours, rate)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	total := 0.0
	for _, m := range requestMix {
		total += m.weight
	}
	wl := &Workload{Name: fmt.Sprintf("generated-%gh-%gph-seed%d", hours, rate, seed)}
	t := 0.0
	count := map[string]int{}
	for {
		t += rng.ExpFloat64() * 3600 / rate
		if t >= hours*3600 {
			break
		}
		u := rng.Float64() * total
		k := 0
		for ; k < len(requestMix)-1 && u >= requestMix[k].weight; k++ {
			u -= requestMix[k].weight
		}
		m := requestMix[k]
		wl.Jobs = append(wl.Jobs, JobSpec{Name: fmt.Sprintf("%s-%d", m.app, count[m.app]), Submit: math.Round(t), App: m.app, Replicas: m.replicas, Batch: m.batch})
		count[m.app]++
	}
	return wl, nil
}
