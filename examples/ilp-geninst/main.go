// Command ilp-geninst writes held-out Sia-shaped allocation instances (see
// ilptest.Generate) as examples/solve JSON files, and optionally as CPLEX LP
// files for cbc and glpsol.
//
//	go run ./examples/ilp-geninst -out DIR -scales 1,8,32 -jobs 30,300,1500 -powers -0.5,0.5 -seeds 3 -lp
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/numtext"
)

func main() {
	out := flag.String("out", "instances", "output directory")
	scales := flag.String("scales", "1,8,32", "cluster scales (64 GPUs each)")
	jobs := flag.String("jobs", "30,300,1500", "job counts")
	powers := flag.String("powers", "-0.5,0.5", "fairness exponents p")
	seeds := flag.Int("seeds", 1, "instances per combination")
	seed0 := flag.Uint64("seed", 1000, "first seed (use seeds not used by the tests)")
	pins := numtext.FloatFlag(flag.CommandLine, "pins", 0.05, "fraction of running jobs pinned")
	lp := flag.Bool("lp", false, "also write FILE.lp")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "geninst: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(*out, *scales, *jobs, *powers, *seeds, *seed0, *pins, *lp); err != nil {
		fmt.Fprintln(os.Stderr, "geninst:", err)
		os.Exit(1)
	}
}

func ints(s string) ([]int, error) {
	var r []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		r = append(r, v)
	}
	return r, nil
}

func run(out, scales, jobs, powers string, seeds int, seed0 uint64, pins float64, lp bool) error {
	sc, err := ints(scales)
	if err != nil {
		return fmt.Errorf("-scales: %w", err)
	}
	js, err := ints(jobs)
	if err != nil {
		return fmt.Errorf("-jobs: %w", err)
	}
	var ps []float64
	for _, f := range strings.Split(powers, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err == nil {
			err = numtext.Check(strings.TrimSpace(f))
		}
		if err != nil {
			return fmt.Errorf("-powers: %q: %w", f, err)
		}
		ps = append(ps, v)
	}
	if seeds < 1 || seeds > 10000 {
		return fmt.Errorf("-seeds %d: want 1..10000", seeds)
	}
	if seed0 > math.MaxUint64-uint64(seeds-1) {
		return fmt.Errorf("-seed %d -seeds %d: the seeds pass the end of uint64", seed0, seeds)
	}
	// two instances written under one name would overwrite each other
	if err := distinct("-scales", scales, sc, func(v int) string { return fmt.Sprint(v) }); err != nil {
		return err
	}
	if err := distinct("-jobs", jobs, js, func(v int) string { return fmt.Sprint(v) }); err != nil {
		return err
	}
	if err := distinct("-powers", powers, ps, powerName); err != nil {
		return err
	}
	for _, s := range sc {
		for _, n := range js {
			for _, pw := range ps {
				if err := (ilptest.Config{Scale: s, Jobs: n, Power: pw, PinFrac: pins}).Validate(); err != nil {
					return fmt.Errorf("-scales %q -jobs %q -powers %q -pins %v: %w", scales, jobs, powers, pins, err)
				}
			}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, s := range sc {
		for _, n := range js {
			for _, pw := range ps {
				for k := 0; k < seeds; k++ {
					seed := seed0 + uint64(k)
					c := ilptest.Config{Scale: s, Jobs: n, Seed: seed, Power: pw, PinFrac: pins}
					p := ilptest.Generate(c)
					name := fmt.Sprintf("sia-g%d-j%d-p%s-s%d", 64*s, n, powerName(pw), seed)
					if err := write(filepath.Join(out, name+".json"), func(f *os.File) error {
						return ilp.WriteJSON(f, p, ilp.Meta{Name: name})
					}); err != nil {
						return err
					}
					if lp {
						if err := write(filepath.Join(out, name+".lp"), func(f *os.File) error {
							return ilp.WriteLP(f, p)
						}); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// powerName is how a power p appears in an instance's file name.
func powerName(p float64) string { return fmt.Sprintf("%+.1f", p) }

// distinct returns an error naming flag when two of its values vs give one
// name in the instances' file names.
func distinct[T any](flag, given string, vs []T, name func(T) string) error {
	seen := map[string]bool{}
	for _, v := range vs {
		n := name(v)
		if seen[n] {
			return fmt.Errorf("%s %q: two values give the file name part %q (one instance would overwrite the other)", flag, given, n)
		}
		seen[n] = true
	}
	return nil
}

func write(path string, fn func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
