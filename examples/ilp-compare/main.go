// Command ilp-compare runs examples/solve, cbc and glpsol side by side, as whole
// processes, on a folder of instances written by ilp-geninst (NAME.json with
// NAME.lp) and prints a table of objectives and wall times, or checks
// examples/solve against the optima of recorded rounds (a .jsonl or
// .jsonl.gz file, one problem with "optimum" per line).
//
//	go build -o /tmp/solve ./examples/solve
//	go run ./examples/ilp-compare -solve /tmp/solve -dir instances
//	go run ./examples/ilp-compare -solve /tmp/solve -rounds ../shared/data/mip-rounds/saturn-w4.jsonl.gz
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
	timeout := flag.Duration("timeout", 120*time.Second, "per-process limit for cbc")
	glpTimeout := flag.Duration("glpsol-timeout", 20*time.Second, "per-process limit for glpsol")
	oursTimeout := flag.Duration("ours-timeout", 0, "passed to examples/solve as -timeout (0 = none)")
	flag.Parse()
	var err error
	switch {
	case flag.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", flag.Arg(0))
	case *timeout <= 0 || *glpTimeout <= 0 || *oursTimeout < 0:
		err = fmt.Errorf("-timeout %v, -glpsol-timeout %v: want positive durations; -ours-timeout %v: want >= 0 (0 = none)", *timeout, *glpTimeout, *oursTimeout)
	case *rounds != "":
		err = checkRounds(*solve, *rounds)
	case *dir != "":
		err = compare(*solve, *dir, *glp, *timeout, *glpTimeout, *oursTimeout)
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

// timing is a process's wall time and CPU time (user + system).
type timing struct{ wall, cpu time.Duration }

func runTimed(ctx context.Context, name string, args ...string) ([]byte, timing, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	t0 := time.Now()
	err := cmd.Run()
	tm := timing{wall: time.Since(t0)}
	if cmd.ProcessState != nil {
		tm.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return out.Bytes(), tm, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func runSolve(solve, file string, timeout time.Duration) (solveOut, timing, error) {
	args := []string{"-in", file}
	if timeout > 0 {
		args = append(args, "-timeout", timeout.String())
	}
	out, d, err := runTimed(context.Background(), solve, args...)
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
func external(timeout time.Duration, re *regexp.Regexp, outFile string, name string, args ...string) (float64, timing) {
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

func compare(solve, dir string, glp bool, timeout, glpTimeout, oursTimeout time.Duration) error {
	if st, err := os.Stat(dir); err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("-dir %s: not a folder", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("-dir %s: no NAME.json instances", dir)
	}
	sort.Strings(files)
	fmt.Println("| instance | ours status | ours objective | cbc objective | glpsol objective | agree | ours wall ms (cpu, solve_ms) | cbc wall ms (cpu) | glpsol wall ms (cpu) | cbc/ours wall | cbc/ours cpu |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	var ratios, cpuRatios []float64
	agree, total, optimal := 0, 0, 0
	worst := map[string]time.Duration{}
	tmp, err := os.MkdirTemp("", "compare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		lp := strings.TrimSuffix(f, ".json") + ".lp"
		so, tOurs, err := runSolve(solve, f, oursTimeout)
		if err != nil {
			return err
		}
		cv, tCbc := external(timeout, cbcRe, "", "cbc", lp, "-solve")
		gv, tGlp := math.NaN(), timing{}
		if glp {
			out := filepath.Join(tmp, "glp.txt")
			os.Remove(out)
			gv, tGlp = external(glpTimeout, glpRe, out, "glpsol", "--lp", lp, "-o", out)
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
		ratio := float64(tCbc.wall) / float64(tOurs.wall)
		cpuRatio := float64(tCbc.cpu) / float64(max(tOurs.cpu, time.Millisecond))
		ratios = append(ratios, ratio)
		cpuRatios = append(cpuRatios, cpuRatio)
		base := filepath.Base(f)
		size := strings.SplitN(base, "-", 3)[1]
		if tOurs.wall > worst[size] {
			worst[size] = tOurs.wall
		}
		glps := "—"
		if glp {
			glps = fmt.Sprintf("%.1f (%.1f)", ms(tGlp.wall), ms(tGlp.cpu))
		}
		fmt.Printf("| %s | %s | %.6f | %s | %s | %v | %.1f (%.1f, %.1f) | %.1f (%.1f) | %s | %.1f | %.1f |\n",
			strings.TrimSuffix(base, ".json"), so.Status, so.Objective, fnum(cv), fnum(gv), ok,
			ms(tOurs.wall), ms(tOurs.cpu), so.SolveMS, ms(tCbc.wall), ms(tCbc.cpu), glps, ratio, cpuRatio)
	}
	fmt.Printf("\ninstances %d, ours optimal %d, objectives agree %d, median cbc/ours ratio: wall %.2f, cpu %.2f\n",
		total, optimal, agree, median(ratios), median(cpuRatios))
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
		so, d, err := runSolve(solve, file, 0)
		if err != nil {
			return fmt.Errorf("%s:%d %s: %v", path, n, meta.Name, err)
		}
		times = append(times, d.wall)
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
