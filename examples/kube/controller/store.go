package controller

import (
	"bytes"
	"context"
	"fmt"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/examples/kube/siakube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// State is kept in one ConfigMap per job in the controller's namespace,
// named RecordPrefix + the Job's UID and labelled LabelRecord, with the
// record (and the job's tracker) as JSON under RecordKey.
const (
	RecordPrefix = "sia-job-"
	RecordKey    = "record.json"
	LabelRecord  = siakube.Prefix + "record"
)

// entry is a job's state in memory: its record, tracker and what was last
// written.
type entry struct {
	rec     *siakube.Record
	tracker *bootstrap.Tracker
	written []byte
	rv      string
}

// store persists records; while the controller leads, memory is the truth
// and the ConfigMaps its copy.
type store struct {
	client    kubernetes.Interface
	namespace string
}

// load lists the records from the API server (a consistent read, not a
// cache). Undecodable records are reported and skipped (the job starts
// afresh).
func (s *store) load(ctx context.Context) (map[string]*entry, []error, error) {
	list, err := s.client.CoreV1().ConfigMaps(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRecord + "=true"})
	if err != nil {
		return nil, nil, fmt.Errorf("list records in %s: %w", s.namespace, err)
	}
	out := map[string]*entry{}
	var bad []error
	for i := range list.Items {
		cm := &list.Items[i]
		data := []byte(cm.Data[RecordKey])
		rec, tr, err := siakube.DecodeRecord(data)
		if err != nil {
			bad = append(bad, fmt.Errorf("configmap %s/%s: %w", cm.Namespace, cm.Name, err))
			continue
		}
		if cm.Name != RecordPrefix+rec.UID {
			bad = append(bad, fmt.Errorf("configmap %s/%s holds the record of UID %s", cm.Namespace, cm.Name, rec.UID))
			continue
		}
		out[rec.UID] = &entry{rec: rec, tracker: tr, written: data, rv: cm.ResourceVersion}
	}
	return out, bad, nil
}

// save writes the entry's record when it changed.
func (s *store) save(ctx context.Context, e *entry) error {
	data, err := e.rec.Encode(e.tracker)
	if err != nil {
		return err
	}
	if bytes.Equal(data, e.written) {
		return nil
	}
	name := RecordPrefix + e.rec.UID
	cms := s.client.CoreV1().ConfigMaps(s.namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace,
				Labels:      map[string]string{LabelRecord: "true"},
				Annotations: map[string]string{siakube.Prefix + "job": e.rec.Job}},
				Data: map[string]string{RecordKey: string(data)}}
			cm, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if err == nil {
				e.rv = cm.ResourceVersion
			}
			return err
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[RecordKey] = string(data)
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err == nil {
			e.rv = cm.ResourceVersion
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save record of job %s: %w", e.rec.Job, err)
	}
	e.written = data
	return nil
}

// remove deletes a job's record.
func (s *store) remove(ctx context.Context, uid string) error {
	err := s.client.CoreV1().ConfigMaps(s.namespace).Delete(ctx, RecordPrefix+uid, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete record %s: %w", RecordPrefix+uid, err)
	}
	return nil
}
