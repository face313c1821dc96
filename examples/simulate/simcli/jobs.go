package simcli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// JobRow is one line of the per-job output (-jobs-csv, -jobs-json): one job
// of one workload under one policy at one scale. Times are seconds from the
// start of the trace; Start, Finish and JCT are -1 when the job never
// started or did not finish.
type JobRow struct {
	Policy   string  `json:"policy"`
	Scale    int     `json:"scale"`
	Workload string  `json:"workload"`
	Job      string  `json:"job"`
	App      string  `json:"app"`
	Arrival  float64 `json:"arrival_s"`
	Start    float64 `json:"start_s"`
	Finish   float64 `json:"finish_s"`
	JCT      float64 `json:"jct_s"`
	GPUHours float64 `json:"gpu_hours"`
	Restarts int     `json:"restarts"`
	Replicas int     `json:"replicas"`
	Batch    int     `json:"batch_size"`
	// WaitReasons counts the rounds the job waited without GPUs, by the
	// policy's reason (sia's Decision.Reason: too-large, quota, …); empty
	// for policies that give none.
	WaitReasons map[string]int `json:"wait_reasons,omitempty"`
}

// jobHeader is the CSV header, in JobRow's order.
var jobHeader = []string{"policy", "scale", "workload", "job", "app", "arrival_s", "start_s", "finish_s", "jct_s", "gpu_hours", "restarts", "replicas", "batch_size", "wait_reasons"}

func jobRows(outs []outcome) []JobRow {
	var rows []JobRow
	for _, o := range outs {
		for _, r := range o.results {
			for _, j := range r.Jobs {
				rows = append(rows, JobRow{Policy: o.policy, Scale: o.scale, Workload: r.Workload, Job: j.Name, App: j.App,
					Arrival: j.Submit, Start: j.Start, Finish: j.Completion, JCT: j.JCT, GPUHours: j.GPUHours(),
					Restarts: j.Restarts, Replicas: j.Replicas, Batch: j.Batch, WaitReasons: j.WaitReasons})
			}
		}
	}
	return rows
}

// writeJobs writes the per-job files the flags ask for.
func writeJobs(c *config, outs []outcome) error {
	if c.jobsCSV == "" && c.jobsJSON == "" {
		return nil
	}
	rows := jobRows(outs)
	if c.jobsCSV != "" {
		if err := writeFile(c.jobsCSV, func(f *os.File) error { return writeJobsCSV(f, rows) }); err != nil {
			return fmt.Errorf("-jobs-csv: %w", err)
		}
	}
	if c.jobsJSON != "" {
		if err := writeFile(c.jobsJSON, func(f *os.File) error {
			if rows == nil {
				rows = []JobRow{}
			}
			e := json.NewEncoder(f)
			e.SetIndent("", " ")
			return e.Encode(rows)
		}); err != nil {
			return fmt.Errorf("-jobs-json: %w", err)
		}
	}
	return nil
}

func writeFile(name string, write func(*os.File) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJobsCSV(f *os.File, rows []JobRow) error {
	w := csv.NewWriter(f)
	if err := w.Write(jobHeader); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range rows {
		rec := []string{r.Policy, strconv.Itoa(r.Scale), r.Workload, r.Job, r.App, g(r.Arrival), g(r.Start), g(r.Finish), g(r.JCT),
			g(r.GPUHours), strconv.Itoa(r.Restarts), strconv.Itoa(r.Replicas), strconv.Itoa(r.Batch), formatReasons(r.WaitReasons)}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// formatReasons writes wait reasons as "reason:rounds" pairs separated by
// ";", sorted by reason.
func formatReasons(m map[string]int) string {
	var b strings.Builder
	for _, r := range slices.Sorted(maps.Keys(m)) {
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(r + ":" + strconv.Itoa(m[r]))
	}
	return b.String()
}
