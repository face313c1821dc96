package siakube

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
)

// FuzzDecodeRecord: a job's record ConfigMap (which anyone with access to
// the namespace may edit) gives a record that passes its checks or an
// error naming the record, never a panic; a record that decodes encodes
// again, and that encoding decodes to the same record and tracker (a
// controller that restarts reads back what it wrote). Seeds are in
// testdata/fuzz/FuzzDecodeRecord and below.
func FuzzDecodeRecord(f *testing.F) {
	spec, err := ParseJobSpec(validAnn())
	require.NoError(f, err)
	for _, rec := range []*Record{
		running(PhaseRestoring, "a100", NodeGPUs{"a1", 4}),
		running(PhaseRunning, "a100", NodeGPUs{"a1", 8}, NodeGPUs{"a2", 8}),
		running(PhaseStarting, "t4", NodeGPUs{"t1", 3}),
		{Phase: PhaseQueued, Restarts: 2, Started: true, Peak: 16, Reason: "quota"},
		{Phase: PhaseStopping, Reason: "lost the optimisation"},
	} {
		in := input("ns/j", rec, &spec)
		in.Record.FirstSeen = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if in.Record.Phase == PhaseRestoring {
			in.Record.RestoreUntil = in.Record.FirstSeen.Add(time.Minute)
		}
		b, err := in.Record.Encode(in.Tracker)
		require.NoError(f, err)
		f.Add(b)
		b, err = in.Record.Encode(nil)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		`{"version":1,"job":"x","phase":"queued"}`,
		`{"version":1,"job":"x","phase":"queued","tracker":null}`,
		`{"version":1,"job":"x","phase":"queued","tracker":{}}`,
		`{"version":1,"job":"x","phase":"running","assigned":{"type":"a","gpus":4097,"perNode":[{"node":"n","gpus":4097}]}}`,
		`{"version":1,"job":"x","phase":"running","assigned":{"type":"a","gpus":2,"perNode":[{"node":"n","gpus":1},{"node":"n","gpus":1}]}}`,
		`{"version":1,"job":"x","phase":"queued","restarts":-1}`,
		`{"version":1,"job":"x","phase":"queued","firstSeen":"9999-12-31T23:59:59.999999999-23:59"}`,
		`{"Version":1,"JOB":"x","phase":"queued","phase":"running"}`,
		`{"version":1,"job":"x","phase":"queued"} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, tr, err := DecodeRecord(b)
		if err != nil {
			require.Nil(t, rec)
			require.Nil(t, tr)
			require.True(t, strings.HasPrefix(err.Error(), "record"), "error names no record: %v", err)
			return
		}
		require.NotNil(t, rec)
		require.Equal(t, RecordVersion, rec.Version)
		require.NoError(t, rec.check())
		checkRecordShape(t, rec)
		if tr != nil {
			sp := tr.Spec()
			for typ := range sp.Limits {
				if _, hybrid := sp.Stages[typ]; len(sp.Stages) > 0 && !hybrid {
					continue
				}
				_, src := tr.Model(typ)
				assert.NotEqual(t, bootstrap.Excluded, src, "type %s of the spec's Limits is excluded", typ)
			}
		}
		once, err := rec.Encode(tr)
		if err != nil {
			// Encode refuses only what JSON cannot carry (a time beyond
			// year 9999 after a zone shift); it must say which job.
			require.Contains(t, err.Error(), rec.Job)
			return
		}
		again, tr2, err := DecodeRecord(once)
		require.NoError(t, err, "the record's own encoding does not decode: %s", once)
		require.Equal(t, tr == nil, tr2 == nil)
		twice, err := again.Encode(tr2)
		require.NoError(t, err)
		require.True(t, bytes.Equal(once, twice), "encoding not stable:\n%s\n%s", once, twice)
	})
}

// checkRecordShape checks what the controller relies on of a decoded
// record: an assignment's GPUs are its nodes' sum, within MaxJobGPUs, its
// nodes named, and its phase agrees with it.
func checkRecordShape(t *testing.T, r *Record) {
	t.Helper()
	sum := 0
	for _, n := range r.Assigned.PerNode {
		require.NotEmpty(t, n.Node)
		require.True(t, n.GPUs >= 1 && n.GPUs <= MaxJobGPUs, "%d GPUs on %s", n.GPUs, n.Node)
		sum += n.GPUs
	}
	require.Equal(t, r.Assigned.GPUs, sum)
	require.LessOrEqual(t, r.Assigned.GPUs, MaxJobGPUs)
	require.GreaterOrEqual(t, r.Restarts, 0)
	require.GreaterOrEqual(t, r.Peak, 0)
	if r.Pinned() {
		require.True(t, r.Assigned.Running())
	}
	pods, per := r.Assigned.Pods(PodPerNode)
	require.Equal(t, r.Assigned.GPUs, pods*per)
	pods, per = r.Assigned.Pods(PodPerGPU)
	require.Equal(t, r.Assigned.GPUs, pods*per)
}

// FuzzParseMeasurement: any annotation value gives a measurement within
// its documented ranges, or an ErrAnnotation error; never a panic.
func FuzzParseMeasurement(f *testing.F) {
	for _, s := range []string{
		`{"type":"a100","nodes":1,"replicas":4,"localBatch":64,"stepTime":0.1,"syncTime":0.01}`,
		`{"job":"ns/j","type":"t4","nodes":2,"replicas":2,"localBatch":8,"stepTime":1,"syncTime":0,"gradSqr":1,"gradVar":2}`,
		`{"type":"a100","nodes":1,"replicas":1,"localBatch":1,"stepTime":1e-300,"syncTime":0}`,
		`{"type":"a100","Nodes":1,"replicas":1,"localBatch":1,"stepTime":1,"syncTime":0}`,
		`{"type":"a100","nodes":1,"nodes":2,"replicas":1,"localBatch":1,"stepTime":1,"syncTime":0}`,
		`{"type":"a100","nodes":1,"replicas":1,"localBatch":1,"stepTime":1,"syncTime":0} {}`,
	} {
		f.Add("ns/j", s)
	}
	f.Fuzz(func(t *testing.T, job, v string) {
		m, err := ParseMeasurement(job, v)
		if err != nil {
			require.ErrorIs(t, err, ErrAnnotation)
			return
		}
		require.True(t, m.Job == "" || m.Job == job)
		require.True(t, validType(m.Type), "type %q", m.Type)
		require.True(t, m.Nodes >= 1 && m.Nodes <= MaxJobGPUs && m.Replicas >= 1 && m.Replicas <= MaxJobGPUs)
		require.True(t, m.LocalBatch >= 1 && m.LocalBatch <= bootstrap.MaxCount)
		require.True(t, m.StepTime > 0 && m.SyncTime >= 0 && m.SyncTime < m.StepTime, "%+v", m)
		require.Equal(t, m.GradSqr == nil, m.GradVar == nil)
		bm := m.Bootstrap()
		require.Equal(t, m.StepTime, bm.StepTime)
	})
}

// TestDecodeRecordNamesField: a record's error names the field at fault (a
// negative restart count is not "an assignment of 0 GPUs lists 0").
func TestDecodeRecordNamesField(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"restarts -1": {`{"version":1,"job":"x","phase":"queued","restarts":-1}`, "restarts -1"},
		"peak -1":     {`{"version":1,"job":"x","phase":"queued","peak":-1}`, "peak -1"},
		"gpus above the most a job may hold": {`{"version":1,"job":"x","phase":"running","assigned":{"type":"a","gpus":4097,"perNode":[{"node":"n","gpus":4096},{"node":"m","gpus":1}]}}`,
			"4097 GPUs"},
		"sum": {`{"version":1,"job":"x","phase":"running","assigned":{"type":"a","gpus":9,"perNode":[{"node":"n","gpus":8}]}}`, "assignment of 9 GPUs lists 8"},
	} {
		_, _, err := DecodeRecord([]byte(c.in))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `record of job x: `, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}
