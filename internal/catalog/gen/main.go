// Command gen derives the simulator's built-in ground truth (package catalog)
// from a profiles folder: it fits the throughput model (goodput.Fit) to every
// placement and scalability row per model and GPU type, records memory
// limits, epochs and progress per epoch, and fits a curve of the gradient
// noise over training. Only these derived numbers are written.
//
//	go run ./internal/catalog/gen -data ../shared/data/profiles -o internal/catalog/catalog.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/catalog"
	"github.com/sia-sched/sia/sia/sim"
)

func main() {
	data := flag.String("data", "../shared/data/profiles", "profiles folder")
	out := flag.String("o", "catalog.json", "output file")
	flag.Parse()
	if err := run(*data, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(data, out string) error {
	types := make([]string, 0, len(sim.ProfileTypes))
	for t := range sim.ProfileTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	tr, err := sim.LoadTrace(data, types)
	if err != nil {
		return err
	}
	c := catalog.Catalog{Source: "derived by internal/catalog/gen from the measured profiles (goodput.Fit per model and GPU type; least-squares noise curve)", Apps: map[string]*catalog.App{}}
	for _, name := range sim.AppNames {
		a, ok := tr.App(name)
		if !ok {
			continue
		}
		ca := &catalog.App{Name: name, InitBatch: a.InitBatch, MaxBatch: a.MaxBatch, MaxEpochs: a.MaxEpochs,
			RestartDelay: a.RestartDelay, Slowdown: a.Slowdown, RestartCost: a.RestartCost, Types: map[string]catalog.Type{}}
		for e := 1; e <= a.MaxEpochs; e++ {
			ca.Progress = append(ca.Progress, tr.Progress(name, e))
		}
		noise, err := fitNoise(tr.Curves(name), a)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		ca.Noise = noise
		for _, t := range types {
			if !tr.Supports(name, t) {
				continue
			}
			obs := tr.Profile(name, t, 0, 0)
			par, err := goodput.Fit(obs, nil)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", name, t, err)
			}
			lo, hi := tr.LocalRange(name, t)
			se := 0.0
			for _, o := range obs {
				pred := par.IterTime(o.Nodes, o.Replicas, float64(o.LocalBatch), 0)
				d := (pred - o.StepTime) / o.StepTime
				se += d * d
			}
			ca.Types[t] = catalog.Type{Params: par, MinLocal: lo, MaxLocal: hi, Xput1: tr.Xput1(name, t), RMSE: math.Sqrt(se / float64(len(obs)))}
			fmt.Fprintf(os.Stderr, "%-12s %-5s rows %4d  rel. RMSE %.3f\n", name, t, len(obs), ca.Types[t].RMSE)
		}
		c.Apps[name] = ca
	}
	b, err := json.MarshalIndent(&c, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

// fitNoise fits ln(var/sqr) = N·[1, x, x², x³, l, x·l] by least squares over
// every epoch of every validation curve.
func fitNoise(curves []sim.Curve, a *sim.App) ([6]float64, error) {
	var rows [][]float64
	var ys []float64
	for _, cv := range curves {
		l := math.Log2(cv.Batch / float64(a.InitBatch))
		for e := 0; e < len(cv.Sqr) && e < a.MaxEpochs; e++ {
			if !(cv.Sqr[e] > 0 && cv.Var[e] > 0) {
				continue
			}
			x := float64(e) / float64(a.MaxEpochs)
			rows = append(rows, []float64{1, x, x * x, x * x * x, l, x * l})
			ys = append(ys, math.Log(cv.Var[e]/cv.Sqr[e]))
		}
	}
	var out [6]float64
	if len(rows) < 6 {
		return out, fmt.Errorf("only %d usable validation rows", len(rows))
	}
	A := mat.NewDense(len(rows), 6, nil)
	for i, r := range rows {
		A.SetRow(i, r)
	}
	// Ridge-regularised normal equations: stable when l is constant.
	var ata mat.Dense
	ata.Mul(A.T(), A)
	for k := 0; k < 6; k++ {
		ata.Set(k, k, ata.At(k, k)+1e-6)
	}
	var aty mat.VecDense
	aty.MulVec(A.T(), mat.NewVecDense(len(ys), ys))
	var sol mat.VecDense
	if err := sol.SolveVec(&ata, &aty); err != nil {
		return out, err
	}
	for k := range out {
		out[k] = sol.AtVec(k)
	}
	return out, nil
}
