package sia

import (
	"bufio"
	"context"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// The scenario format of testdata/*.txt (golden round tests). One directive
// per line; '#' starts a comment.
//
//	options p=-0.5 lambda=1.1 variant=paper|artifact seed=N maxgpus=N scaleup=F nocap penalty=SEC
//	        filler round clip grace penalties blind deadline=MS
//	node <id> <type> <gpus>
//	job <id> [kind=adaptive|strong|rigid] [gpus=N] [min=N] [max=N] [submitted=SEC]
//	         [app=NAME] [nonpreemptible] [cost=SEC]
//	  table <type>:<replicas>=<goodput> ...       goodputs stated directly (siatest.Table)
//	  model <type> ac= bc= an= bn= ar= br= gamma= m0= maxb= bmin= bmax= sqr= var= [stages= micro=]
//	  state [restarts=N] [peak=N] [current=<type>:<nodes>:<gpus>] [at=node/i,node/i,...]
//	round <now-SEC> [restore=J1,J2] [finish=J3,J4]
//
// Jobs keep the order of declaration. After each round the harness applies
// the plan as a host would: Current becomes the decided allocation, Restarts
// grows for Resize/Move/Migrate and for a Start of a job that ran before,
// PeakReplicas grows. "restore=" marks jobs as in a checkpoint-restore for
// that round; "finish=" removes jobs before the round.

type scenario struct {
	opts   Options
	nodes  []Node
	jobs   []*scJob
	rounds []scRound
}

type scJob struct {
	job    Job
	table  siatest.Table
	models bootstrap.Static
}

type scRound struct {
	now     time.Duration
	restore map[string]bool
	finish  map[string]bool
	line    int
}

func kv(tok string) (string, string) {
	k, v, _ := strings.Cut(tok, "=")
	return k, v
}

func parseScenario(r io.Reader) (*scenario, error) {
	sc := &scenario{}
	s := bufio.NewScanner(r)
	ln := 0
	var cur *scJob
	for s.Scan() {
		ln++
		line := s.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s", ln, fmt.Sprintf(format, args...))
		}
		num := func(v string) (float64, error) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fail("bad number %q", v)
			}
			return x, nil
		}
		atoi := func(v string) (int, error) {
			x, err := strconv.Atoi(v)
			if err != nil {
				return 0, fail("bad integer %q", v)
			}
			return x, nil
		}
		var err error
		switch f[0] {
		case "options":
			for _, tok := range f[1:] {
				k, v := kv(tok)
				switch k {
				case "p":
					sc.opts.P, err = num(v)
				case "lambda":
					sc.opts.Lambda, err = num(v)
				case "variant":
					switch v {
					case "paper":
						sc.opts.Artifact = nil
					case "artifact":
						sc.opts.Artifact = PublishedArtifact()
					default:
						err = fail("unknown variant %q", v)
					}
				case "seed":
					var x int
					x, err = atoi(v)
					sc.opts.Seed = uint64(x)
				case "maxgpus":
					sc.opts.MaxGPUsPerJob, err = atoi(v)
				case "scaleup":
					sc.opts.ScaleUpFactor, err = num(v)
				case "nocap":
					sc.opts.NoScaleUpCap = true
				case "penalty":
					var x float64
					x, err = num(v)
					sc.opts.RestartCost = time.Duration(x * float64(time.Second))
				case "filler":
					sc.knobs().Filler = true
				case "round":
					sc.knobs().Round = true
				case "clip":
					sc.knobs().Clip = true
				case "grace":
					sc.knobs().RestartGrace = true
				case "penalties":
					sc.knobs().ModelPenalties = true
				case "blind":
					sc.knobs().BlindFirst = true
				default:
					err = fail("unknown option %q", k)
				}
				if err != nil {
					return nil, err
				}
			}
		case "node":
			if len(f) != 4 {
				return nil, fail("want: node <id> <type> <gpus>")
			}
			g, err := atoi(f[3])
			if err != nil {
				return nil, err
			}
			sc.nodes = append(sc.nodes, Node{ID: f[1], Type: f[2], GPUs: g})
		case "job":
			if len(f) < 2 {
				return nil, fail("want: job <id> ...")
			}
			cur = &scJob{job: Job{ID: f[1]}}
			sc.jobs = append(sc.jobs, cur)
			j := &cur.job
			for _, tok := range f[2:] {
				k, v := kv(tok)
				switch k {
				case "kind":
					switch v {
					case "adaptive":
						j.Kind = Adaptive
					case "strong":
						j.Kind = StrongScaling
					case "rigid":
						j.Kind = Rigid
					default:
						err = fail("unknown kind %q", v)
					}
				case "gpus":
					j.GPUs, err = atoi(v)
				case "min":
					j.MinGPUs, err = atoi(v)
				case "max":
					j.MaxGPUs, err = atoi(v)
				case "submitted":
					var x float64
					x, err = num(v)
					j.Submitted = epoch.Add(time.Duration(x * float64(time.Second)))
				case "app":
					j.Application = v
				case "nonpreemptible":
					j.NonPreemptible = true
				case "cost":
					var x float64
					x, err = num(v)
					j.State.RestartCost = time.Duration(x * float64(time.Second))
				default:
					err = fail("unknown job field %q", k)
				}
				if err != nil {
					return nil, err
				}
			}
		case "table":
			if cur == nil {
				return nil, fail("table outside a job")
			}
			if cur.table == nil {
				cur.table = siatest.Table{}
			}
			for _, tok := range f[1:] {
				k, v := kv(tok)
				t, rs, ok := strings.Cut(k, ":")
				if !ok {
					return nil, fail("want <type>:<replicas>=<goodput>, got %q", tok)
				}
				r, err := atoi(rs)
				if err != nil {
					return nil, err
				}
				x, err := num(v)
				if err != nil {
					return nil, err
				}
				if cur.table[t] == nil {
					cur.table[t] = map[int]float64{}
				}
				cur.table[t][r] = x
			}
		case "model":
			if cur == nil || len(f) < 2 {
				return nil, fail("model outside a job or without a type")
			}
			m := goodput.Model{Params: goodput.Params{Gamma: 1}}
			for _, tok := range f[2:] {
				k, v := kv(tok)
				var x float64
				if x, err = num(v); err != nil {
					return nil, err
				}
				switch k {
				case "ac":
					m.Params.AlphaC = x
				case "bc":
					m.Params.BetaC = x
				case "an":
					m.Params.AlphaN = x
				case "bn":
					m.Params.BetaN = x
				case "ar":
					m.Params.AlphaR = x
				case "br":
					m.Params.BetaR = x
				case "gamma":
					m.Params.Gamma = x
				case "m0":
					m.InitBatch = int(x)
				case "maxb":
					m.MaxBatch = int(x)
				case "bmin":
					m.Limits.MinLocalBatch = int(x)
				case "bmax":
					m.Limits.MaxLocalBatch = int(x)
				case "sqr":
					m.Grad.Sqr = x
				case "var":
					m.Grad.Var = x
				case "stages":
					m.Stages = int(x)
				case "micro":
					m.MicroBatches = int(x)
				default:
					return nil, fail("unknown model field %q", k)
				}
			}
			if cur.models == nil {
				cur.models = bootstrap.Static{}
			}
			cur.models[f[1]] = m
		case "state":
			if cur == nil {
				return nil, fail("state outside a job")
			}
			st := &cur.job.State
			for _, tok := range f[1:] {
				k, v := kv(tok)
				switch k {
				case "restarts":
					st.Restarts, err = atoi(v)
				case "peak":
					st.PeakReplicas, err = atoi(v)
				case "current":
					parts := strings.Split(v, ":")
					if len(parts) != 3 {
						return nil, fail("want current=<type>:<nodes>:<gpus>")
					}
					st.Current.Type = parts[0]
					if st.Current.Nodes, err = atoi(parts[1]); err == nil {
						st.Current.GPUs, err = atoi(parts[2])
					}
				case "at":
					for _, g := range strings.Split(v, ",") {
						n, i, _ := strings.Cut(g, "/")
						var x int
						if x, err = atoi(i); err != nil {
							break
						}
						st.Current.Placement = append(st.Current.Placement, GPU{Node: n, Index: x})
					}
				default:
					err = fail("unknown state field %q", k)
				}
				if err != nil {
					return nil, err
				}
			}
		case "round":
			if len(f) < 2 {
				return nil, fail("want: round <now-seconds>")
			}
			x, err := num(f[1])
			if err != nil {
				return nil, err
			}
			rd := scRound{now: time.Duration(x * float64(time.Second)), restore: map[string]bool{}, finish: map[string]bool{}, line: ln}
			for _, tok := range f[2:] {
				k, v := kv(tok)
				switch k {
				case "restore":
					for _, id := range strings.Split(v, ",") {
						rd.restore[id] = true
					}
				case "finish":
					for _, id := range strings.Split(v, ",") {
						rd.finish[id] = true
					}
				default:
					return nil, fail("unknown round field %q", k)
				}
			}
			sc.rounds = append(sc.rounds, rd)
		default:
			return nil, fail("unknown directive %q", f[0])
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	for _, j := range sc.jobs {
		switch {
		case j.table != nil && j.models != nil:
			return nil, fmt.Errorf("job %q: both table and model", j.job.ID)
		case j.table != nil:
			j.job.Models = j.table
		case j.models != nil:
			j.job.Models = j.models
		default:
			j.job.Models = bootstrap.Static{}
		}
	}
	return sc, nil
}

// epoch is time zero of scenarios.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// run plays the scenario and returns the golden transcript.
func (sc *scenario) run(ctx context.Context) (string, []Plan, error) {
	s, err := New(&sc.opts)
	if err != nil {
		return "", nil, err
	}
	var out strings.Builder
	var plans []Plan
	active := append([]*scJob(nil), sc.jobs...)
	for ri, rd := range sc.rounds {
		var jobs []Job
		var keep []*scJob
		for _, j := range active {
			if rd.finish[j.job.ID] {
				continue
			}
			keep = append(keep, j)
			jb := j.job
			jb.State.Restoring = rd.restore[jb.ID]
			jobs = append(jobs, jb)
		}
		active = keep
		snap := Snapshot{Now: epoch.Add(rd.now), Nodes: sc.nodes, Jobs: jobs}
		plan, err := s.Round(ctx, snap)
		fmt.Fprintf(&out, "round %d (line %d) now=%gs\n", ri+1, rd.line, rd.now.Seconds())
		if err != nil {
			fmt.Fprintf(&out, "  error: %v\n", err)
			continue
		}
		plans = append(plans, plan)
		writePlan(&out, &plan)
		// Apply the plan as a host would. Scenarios state restores
		// explicitly (restore=), so the recorded restore is not kept.
		for i, d := range plan.Decisions {
			st := &active[i].job.State
			st.Advance(d)
			st.RestoreUntil = time.Time{}
		}
	}
	return out.String(), plans, nil
}

func fmtF(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "+inf"
	case math.IsNaN(x):
		return "nan"
	}
	return strconv.FormatFloat(x, 'g', 5, 64)
}

func writePlan(w io.Writer, p *Plan) {
	fmt.Fprintf(w, "  status=%v objective=%s bound=%s\n", p.Status, fmtF(p.Objective), fmtF(p.Bound))
	for i, d := range p.Decisions {
		fmt.Fprintf(w, "  %s %s", d.Job, d.Action)
		if d.Allocation.Running() {
			a := d.Allocation
			var gs []string
			for _, g := range a.Placement {
				gs = append(gs, fmt.Sprintf("%s/%d", g.Node, g.Index))
			}
			fmt.Fprintf(w, " (%d,%d,%s) gpus=%s batch=%dx%dx%d=%d G=%s goodput=%s",
				a.Nodes, a.GPUs, a.Type, strings.Join(gs, ","), d.Replicas, d.LocalBatch, d.AccumSteps+1, d.GlobalBatch,
				fmtF(p.entry(i).Normalized), fmtF(d.Goodput))
		}
		if d.Pinned {
			fmt.Fprint(w, " pinned")
		}
		if d.Evicted {
			fmt.Fprint(w, " evicted")
		}
		fmt.Fprintln(w)
		row := &p.matrix.Rows[i]
		fmt.Fprintf(w, "    r=%s lambda=%s:", fmtF(row.Restart), fmtF(row.Unallocated))
		for _, e := range row.Entries {
			flag := ""
			switch {
			case e.Dropped:
				flag = "!"
			case e.Dominated:
				flag = "-"
			case e.Invalid:
				flag = "?"
			case e.Source == bootstrap.None:
				flag = "~"
			}
			if e.Current {
				flag += "*"
			}
			fmt.Fprintf(w, " %s%s=%s/%s", e.Config, flag, fmtF(e.Normalized), fmtF(e.Value))
		}
		fmt.Fprintln(w)
	}
	if l := planLists(p); len(l.evicted)+len(l.migrated)+len(l.unplaced) > 0 {
		fmt.Fprintf(w, "  evicted=%v migrated=%v unplaced=%v\n", l.evicted, l.migrated, l.unplaced)
	}
}

// knobs returns the scenario's artifact knobs, set up (none on) on first use.
func (sc *scenario) knobs() *ArtifactKnobs {
	if sc.opts.Artifact == nil {
		sc.opts.Artifact = &ArtifactKnobs{}
	}
	return sc.opts.Artifact
}
