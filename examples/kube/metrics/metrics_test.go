package metrics

import (
	"errors"
	"io"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/sia"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.Observe(sia.Event{Stage: sia.StageMatrix, Duration: 3 * time.Millisecond, Jobs: 4, Options: 40})
	m.Observe(sia.Event{Stage: sia.StageSolve, Duration: 20 * time.Millisecond, Status: ilp.Feasible})
	plan := &sia.Plan{Status: ilp.Feasible, Objective: 2, Bound: 1.5}
	m.ObserveRound(&controller.Report{Now: time.Unix(1000, 0), Duration: time.Second, Plan: plan,
		Actions: map[string]int{"start": 3, "queue": 1}, Phases: map[string]int{"running": 2, "queued": 1, "invalid": 1},
		GPUs: map[string]int{"a100": 8, "t4": 2}, JobErrors: []string{"x"}})
	m.ObserveRound(&controller.Report{Err: errors.New("boom")})

	assert.Equal(t, 3.0, testutil.ToFloat64(m.actions.WithLabelValues("start")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.actions.WithLabelValues("migrate")), "every action is exported from the start")
	assert.Equal(t, 2.0, testutil.ToFloat64(m.jobs.WithLabelValues("running")))
	assert.Equal(t, 8.0, testutil.ToFloat64(m.gpus.WithLabelValues("a100")))
	assert.Equal(t, 0.25, testutil.ToFloat64(m.gap))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.rounds.WithLabelValues("error")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.writeErrors))
	assert.Equal(t, 40.0, testutil.ToFloat64(m.options))
	assert.Equal(t, 1000.0, testutil.ToFloat64(m.last))

	assert.Equal(t, 0.0, Gap(&sia.Plan{Status: ilp.Optimal, Objective: 1, Bound: 0.5}))
	assert.True(t, math.IsInf(Gap(&sia.Plan{Status: ilp.Feasible, Objective: 0, Bound: 1}), 1))

	srv := httptest.NewServer(Handler(reg, nil, func() error { return errors.New("not synced") }))
	defer srv.Close()
	body := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, text := body("/metrics")
	assert.Equal(t, 200, code)
	for _, name := range []string{"sia_round_duration_seconds_bucket", "sia_stage_duration_seconds_bucket{stage=", "sia_plan_actions_total{action=\"start\"} 3", "sia_gpus_allocated{gpu_type=\"a100\"} 8", "sia_solver_gap 0.25", "sia_jobs{state=\"invalid\"} 1"} {
		assert.True(t, strings.Contains(text, name), name)
	}
	code, _ = body("/healthz")
	assert.Equal(t, 200, code)
	code, text = body("/readyz")
	assert.Equal(t, 503, code)
	assert.Contains(t, text, "not synced")
}
