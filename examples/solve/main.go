// Command solve reads one allocation problem in JSON, solves it exactly with
// package ilp and prints one JSON object on stdout:
//
//	solve -in round.json [-lp round.lp] [-timeout 10s] [-grid 0.01]
//
// Input (unknown keys are rejected; "name" and "optimum" of recorded rounds,
// and the optional "grid", "reserved" and "quotas" of ilp.ReadJSON are
// accepted):
//
//	{"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},
//	 "jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0}]}
//
// Output, with -1 for an unallocated job:
//
//	{"status":"optimal","objective":12.34,"bound":12.34,"assignment":{"j0":0,"j1":-1},"solve_ms":1.2}
//
// "bound" is the solver's proven bound, or null when a -timeout cut the
// solve short before it knew one.
//
// When the file declares no "grid" and -grid is not given, a grid of 0.01 is
// used if every value lies on it (Sia rounds its values to two decimals);
// this is exact, since objectives then differ by whole steps.
//
// Bad input (missing file, malformed JSON, negative capacity, duplicate ID,
// NaN, pins that cannot hold, ...) prints a one-line error naming the job or
// field on stderr and exits with status 1; bad flags exit with status 2.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/internal/numtext"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("solve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported on one line below
	in := fs.String("in", "", "input JSON file (- for stdin)")
	lpOut := fs.String("lp", "", "also write the problem in CPLEX LP format to this file")
	timeout := fs.Duration("timeout", 0, "stop after this long and print the best assignment found (0 = no limit)")
	grid := numtext.FloatFlag(fs, "grid", -1, "declare that values lie on this grid, e.g. 0.01; 0 = none (default: the file's \"grid\", else 0.01 when every value lies on it)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintln(stderr, "solve: "+strings.ReplaceAll(err.Error(), "\n", " "))
		return 2
	}
	gridSet := false
	fs.Visit(func(f *flag.Flag) { gridSet = gridSet || f.Name == "grid" })
	switch {
	case gridSet && !(*grid >= 0 && !math.IsInf(*grid, 0)):
		fmt.Fprintf(stderr, "solve: -grid %v: want a finite step >= 0 (0 = none)\n", *grid)
		return 2
	case *timeout < 0:
		fmt.Fprintf(stderr, "solve: -timeout %v: want >= 0 (0 = no limit)\n", *timeout)
		return 2
	}
	if !gridSet {
		*grid = -1
	}
	if *in == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "solve: usage: solve -in FILE.json [-lp FILE.lp] [-timeout DURATION] [-grid STEP]")
		return 2
	}
	if err := solve(*in, *lpOut, *timeout, *grid, stdout); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		fmt.Fprintln(stderr, "solve: "+msg)
		return 1
	}
	return 0
}

type output struct {
	Status     string         `json:"status"`
	Objective  float64        `json:"objective"`
	Bound      *float64       `json:"bound"` // null when no bound is known (a solve cut short before one)
	Assignment map[string]int `json:"assignment"`
	SolveMS    float64        `json:"solve_ms"`
}

func solve(in, lpOut string, timeout time.Duration, grid float64, stdout io.Writer) error {
	var data []byte
	var err error
	if in == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(in)
	}
	if err != nil {
		return fmt.Errorf("-in: %w", err)
	}
	p, _, err := ilp.ParseJSON(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	switch {
	case grid >= 0:
		p.Grid = grid
		if err := p.Validate(); err != nil {
			return fmt.Errorf("-grid: %w", err)
		}
	case p.Grid == 0 && p.OnGrid(0.01):
		// values rounded to two decimals, as Sia's are: the grid proves
		// optimality as soon as no solution can gain a whole step
		p.Grid = 0.01
	}
	if lpOut != "" {
		var buf bytes.Buffer
		if err := ilp.WriteLP(&buf, p); err != nil {
			return err
		}
		if err := os.WriteFile(lpOut, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("-lp: %w", err)
		}
	}
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	t0 := time.Now()
	sol, err := ilp.Solve(ctx, p, nil)
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if err != nil && !errors.Is(err, ilp.ErrInfeasible) {
		return fmt.Errorf("%s: %w", in, err)
	}
	out := output{Status: sol.Status.String(), SolveMS: ms, Assignment: map[string]int{}}
	if sol.Status == ilp.Infeasible {
		// keep the JSON valid: no objective exists
		fmt.Fprintf(stdout, "{\"status\":\"infeasible\",\"error\":%q,\"solve_ms\":%v}\n", err.Error(), ms)
		return fmt.Errorf("%s: %w", in, err)
	}
	out.Objective = sol.Objective
	if b := sol.Bound; !math.IsInf(b, 0) && !math.IsNaN(b) {
		out.Bound = &b
	}
	for i, j := range p.Jobs {
		out.Assignment[j.ID] = sol.Assignment[i]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
