// Command compare runs examples/solve, cbc and glpsol side by side, as whole
// processes, on a folder of instances written by geninst (NAME.json with
// NAME.lp) and prints a table of objectives and wall times, or checks
// examples/solve against the optima of recorded rounds (a .jsonl or
// .jsonl.gz file, one problem with "optimum" per line).
//
//	go build -o /tmp/solve ./examples/solve
//	go run ./ilp/ilptest/compare -solve /tmp/solve -dir instances
//	go run ./ilp/ilptest/compare -solve /tmp/solve -rounds ../shared/data/mip-rounds/saturn-w4.jsonl.gz
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	solve := flag.String("solve", "solve", "examples/solve binary")
	dir := flag.String("dir", "", "folder of NAME.json + NAME.lp instances")
	rounds := flag.String("rounds", "", "recorded rounds (.jsonl or .jsonl.gz) to check against their optima")
	glp := flag.Bool("glpsol", true, "also run glpsol")
	timeout := flag.Duration("timeout", 120*time.Second, "per-process limit for cbc and glpsol")
	flag.Parse()
	var err error
	switch {
	case *rounds != "":
		err = checkRounds(*solve, *rounds)
	case *dir != "":
		err = compare(*solve, *dir, *glp, *timeout)
	default:
		err = fmt.Errorf("give -dir or -rounds")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

type solveOut struct {
	Status    string  `json:"status"`
	Objective float64 `json:"objective"`
	SolveMS   float64 `json:"solve_ms"`
}

func runTimed(ctx context.Context, name string, args ...string) ([]byte, time.Duration, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	t0 := time.Now()
	err := cmd.Run()
	return out.Bytes(), time.Since(t0), err
}

func runSolve(solve, file string) (solveOut, time.Duration, error) {
	out, d, err := runTimed(context.Background(), solve, "-in", file)
	if err != nil {
		return solveOut{}, d, fmt.Errorf("%s: %v: %s", file, err, out)
	}
	var so solveOut
	if err := json.Unmarshal(out, &so); err != nil {
		return solveOut{}, d, fmt.Errorf("%s: %v", file, err)
	}
	return so, d, nil
}

var (
	cbcRe = regexp.MustCompile(`(?m)^Objective value:\s+(\S+)`)
	glpRe = regexp.MustCompile(`(?m)^Objective:\s+obj = (\S+)`)
)

// external runs an LP solver and returns its objective (NaN when it did not
// finish or print one).
func external(timeout time.Duration, re *regexp.Regexp, outFile string, name string, args ...string) (float64, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, d, err := runTimed(ctx, name, args...)
	if outFile != "" {
		out, _ = os.ReadFile(outFile)
	}
	if err != nil && ctx.Err() != nil {
		return math.NaN(), d
	}
	m := re.FindSubmatch(out)
	if m == nil {
		return math.NaN(), d
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	if outFile != "" && !bytes.Contains(out, []byte("INTEGER OPTIMAL")) {
		return math.NaN(), d
	}
	return v, d
}

func compare(solve, dir string, glp bool, timeout time.Duration) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	fmt.Println("| instance | ours status | ours objective | cbc objective | glpsol objective | agree | ours ms (solve_ms) | cbc ms | glpsol ms | cbc/ours |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	var ratios []float64
	agree, total, optimal := 0, 0, 0
	worst := map[string]time.Duration{}
	tmp, err := os.MkdirTemp("", "compare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		lp := strings.TrimSuffix(f, ".json") + ".lp"
		so, dOurs, err := runSolve(solve, f)
		if err != nil {
			return err
		}
		cv, dCbc := external(timeout, cbcRe, "", "cbc", lp, "-solve")
		gv, dGlp := math.NaN(), time.Duration(0)
		if glp {
			out := filepath.Join(tmp, "glp.txt")
			os.Remove(out)
			gv, dGlp = external(timeout, glpRe, out, "glpsol", "--lp", lp, "-o", out)
		}
		tol := 1e-6 * math.Max(1, math.Abs(so.Objective))
		ok := !math.IsNaN(cv) && math.Abs(cv-so.Objective) <= tol && (math.IsNaN(gv) || math.Abs(gv-so.Objective) <= tol)
		total++
		if ok {
			agree++
		}
		if so.Status == "optimal" {
			optimal++
		}
		ratio := float64(dCbc) / float64(dOurs)
		ratios = append(ratios, ratio)
		base := filepath.Base(f)
		size := strings.SplitN(base, "-", 3)[1]
		if dOurs > worst[size] {
			worst[size] = dOurs
		}
		glps := "—"
		if glp {
			glps = fmt.Sprintf("%.2f", float64(dGlp.Microseconds())/1000)
		}
		fmt.Printf("| %s | %s | %.6f | %s | %s | %v | %.1f (%.1f) | %.1f | %s | %.1f |\n",
			strings.TrimSuffix(base, ".json"), so.Status, so.Objective, fnum(cv), fnum(gv), ok,
			float64(dOurs.Microseconds())/1000, so.SolveMS, float64(dCbc.Microseconds())/1000, glps, ratio)
	}
	sort.Float64s(ratios)
	med := math.NaN()
	if n := len(ratios); n > 0 {
		med = ratios[n/2]
		if n%2 == 0 {
			med = (ratios[n/2-1] + ratios[n/2]) / 2
		}
	}
	fmt.Printf("\ninstances %d, ours optimal %d, objectives agree %d, median cbc/ours wall ratio %.2f\n", total, optimal, agree, med)
	var sizes []string
	for s := range worst {
		sizes = append(sizes, s)
	}
	sort.Strings(sizes)
	for _, s := range sizes {
		fmt.Printf("slowest ours at %s: %v\n", s, worst[s].Round(time.Millisecond))
	}
	return nil
}

func fnum(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.6f", v)
}

func checkRounds(solve, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		r = gz
	}
	tmp, err := os.MkdirTemp("", "rounds")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	n, match, optimal := 0, 0, 0
	var times []time.Duration
	for sc.Scan() {
		n++
		var meta struct {
			Name    string   `json:"name"`
			Optimum *float64 `json:"optimum"`
		}
		if err := json.Unmarshal(sc.Bytes(), &meta); err != nil || meta.Optimum == nil {
			return fmt.Errorf("%s:%d: no optimum", path, n)
		}
		file := filepath.Join(tmp, "round.json")
		if err := os.WriteFile(file, sc.Bytes(), 0o644); err != nil {
			return err
		}
		so, d, err := runSolve(solve, file)
		if err != nil {
			return fmt.Errorf("%s:%d %s: %v", path, n, meta.Name, err)
		}
		times = append(times, d)
		if so.Status == "optimal" {
			optimal++
		}
		if math.Abs(so.Objective-*meta.Optimum) <= 1e-6*math.Max(1, math.Abs(*meta.Optimum)) {
			match++
		} else {
			fmt.Printf("MISMATCH %s: ours %v recorded %v\n", meta.Name, so.Objective, *meta.Optimum)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	if len(times) == 0 {
		return fmt.Errorf("%s: no rounds", path)
	}
	fmt.Printf("rounds %d, optimal %d, matching the recorded optimum %d; process wall time median %v, max %v\n",
		n, optimal, match, times[len(times)/2].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond))
	return nil
}
