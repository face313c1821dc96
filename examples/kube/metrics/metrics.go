package metrics

import (
	"math"
	"net/http"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/sia"
)

// Metrics is a controller.Metrics that exports Prometheus metrics, named
// after Kueue's and kube-scheduler's conventions (base units, _seconds and
// _total suffixes, a result label on attempts):
//
//	sia_round_duration_seconds{result}     histogram of whole rounds (success, error)
//	sia_stage_duration_seconds{stage}      histogram of the scheduler's steps (matrix, solve, place)
//	sia_rounds_total{result}               rounds run
//	sia_solver_gap                         relative gap |bound−objective|/|objective| of the last plan
//	sia_solver_status{status}              1 for the last plan's solver status (optimal, feasible, …)
//	sia_plan_actions_total{action}         decisions by action (keep, start, resize, move, migrate, preempt, queue)
//	sia_jobs{state}                        opted-in jobs by phase (queued, starting, restoring, running, stopping, invalid)
//	sia_gpus_allocated{gpu_type}           GPUs assigned to sia jobs per GPU type
//	sia_round_jobs, sia_round_options      jobs and matrix options of the last round
//	sia_nodes_skipped                      nodes left out of the last round (cordoned, not ready, tainted, …)
//	sia_job_write_errors_total             per-job write failures (the round went on)
//	sia_last_round_timestamp_seconds       time of the last successful round
type Metrics struct {
	round       *prometheus.HistogramVec
	stage       *prometheus.HistogramVec
	rounds      *prometheus.CounterVec
	gap         prometheus.Gauge
	status      *prometheus.GaugeVec
	actions     *prometheus.CounterVec
	jobs        *prometheus.GaugeVec
	gpus        *prometheus.GaugeVec
	roundJobs   prometheus.Gauge
	options     prometheus.Gauge
	skipped     prometheus.Gauge
	writeErrors prometheus.Counter
	last        prometheus.Gauge

	mu       sync.Mutex
	seenGPUs map[string]bool
}

// New registers the metrics with reg (a fresh prometheus.NewRegistry() in
// tests; nil means prometheus.DefaultRegisterer).
func New(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	buckets := prometheus.ExponentialBuckets(0.001, 2, 16) // 1 ms … 33 s
	m := &Metrics{
		round: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sia_round_duration_seconds",
			Help: "Duration of a controller round (read, schedule, write), by result.", Buckets: buckets}, []string{"result"}),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sia_stage_duration_seconds",
			Help: "Duration of a step of the scheduling round (matrix, solve, place).", Buckets: buckets}, []string{"stage"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sia_rounds_total",
			Help: "Rounds run, by result."}, []string{"result"}),
		gap: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sia_solver_gap",
			Help: "Relative gap between the solver's bound and objective in the last plan (0 when optimal)."}),
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sia_solver_status",
			Help: "1 for the solver status of the last plan."}, []string{"status"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sia_plan_actions_total",
			Help: "Plan decisions, by action."}, []string{"action"}),
		jobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sia_jobs",
			Help: "Opted-in jobs by state."}, []string{"state"}),
		gpus: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sia_gpus_allocated",
			Help: "GPUs assigned to sia jobs, by GPU type."}, []string{"gpu_type"}),
		roundJobs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sia_round_jobs", Help: "Jobs in the last round's snapshot."}),
		options:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "sia_round_options", Help: "Goodput-matrix options of the last round."}),
		skipped:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "sia_nodes_skipped", Help: "Nodes left out of the last round."}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "sia_job_write_errors_total",
			Help: "Per-job write failures (the round went on)."}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sia_last_round_timestamp_seconds",
			Help: "Unix time of the last successful round (the controller's clock)."}),
		seenGPUs: map[string]bool{},
	}
	reg.MustRegister(m.round, m.stage, m.rounds, m.gap, m.status, m.actions, m.jobs, m.gpus,
		m.roundJobs, m.options, m.skipped, m.writeErrors, m.last)
	for _, a := range []sia.Action{sia.Queue, sia.Keep, sia.Start, sia.Resize, sia.Move, sia.Migrate, sia.Preempt} {
		m.actions.WithLabelValues(a.String())
	}
	for _, r := range []string{"success", "error"} {
		m.rounds.WithLabelValues(r)
	}
	return m
}

// Observe is a sia.Options.Observer: one observation per scheduler step.
func (m *Metrics) Observe(e sia.Event) {
	m.stage.WithLabelValues(e.Stage.String()).Observe(e.Duration.Seconds())
	if e.Stage == sia.StageMatrix {
		m.roundJobs.Set(float64(e.Jobs))
		m.options.Set(float64(e.Offered))
	}
}

// ObserveRound implements controller.Metrics.
func (m *Metrics) ObserveRound(r *controller.Report) {
	result := "success"
	if r.Err != nil {
		result = "error"
	}
	m.round.WithLabelValues(result).Observe(r.Duration.Seconds())
	m.rounds.WithLabelValues(result).Inc()
	m.writeErrors.Add(float64(len(r.JobErrors)))
	if r.Err != nil {
		return
	}
	m.last.Set(float64(r.Now.UnixNano()) / 1e9)
	m.skipped.Set(float64(len(r.Skipped)))
	for a, n := range r.Actions {
		m.actions.WithLabelValues(a).Add(float64(n))
	}
	for _, s := range []string{"queued", "starting", "restoring", "running", "stopping", "invalid"} {
		m.jobs.WithLabelValues(s).Set(float64(r.Phases[s]))
	}
	m.mu.Lock()
	for t := range r.GPUs {
		m.seenGPUs[t] = true
	}
	types := make([]string, 0, len(m.seenGPUs))
	for t := range m.seenGPUs {
		types = append(types, t)
	}
	m.mu.Unlock()
	sort.Strings(types)
	for _, t := range types {
		m.gpus.WithLabelValues(t).Set(float64(r.GPUs[t]))
	}
	if r.Plan != nil {
		m.status.Reset()
		m.status.WithLabelValues(r.Plan.Status.String()).Set(1)
		m.gap.Set(Gap(r.Plan))
	} else {
		m.roundJobs.Set(0)
		m.options.Set(0)
	}
}

// Gap is the plan's relative optimality gap |Bound − Objective| / |Objective|
// (0 for an optimal plan, +Inf when the objective is 0 and the bound is not).
func Gap(p *sia.Plan) float64 {
	if p.Status.Optimal() {
		return 0
	}
	d := math.Abs(p.Bound - p.Objective)
	if d == 0 {
		return 0
	}
	if p.Objective == 0 || math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / math.Abs(p.Objective)
}

// Handler serves /metrics (the gatherer's metrics), /healthz (healthy) and
// /readyz (ready); a check returns nil when fine. Nil checks always pass.
func Handler(g prometheus.Gatherer, healthy, ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	check := func(f func() error) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if f != nil {
				if err := f(); err != nil {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
			}
			_, _ = w.Write([]byte("ok\n"))
		}
	}
	mux.HandleFunc("/healthz", check(healthy))
	mux.HandleFunc("/readyz", check(ready))
	return mux
}
