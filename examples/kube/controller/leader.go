package controller

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderConfig configures leader election: a Lease in the controller's
// namespace. Zero durations mean client-go's usual 15 s / 10 s / 2 s.
type LeaderConfig struct {
	// Lease is the Lease's name (default "sia-controller"); Identity this
	// replica's name (its pod name). Identity is required.
	Lease, Identity                           string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnLeading, if not nil, is told when this replica starts acting (true)
	// and when its rounds have stopped (false).
	OnLeading func(bool)
}

// RunWithLeaderElection runs the controller's rounds only while this replica
// holds the Lease, so two replicas never both act. It returns when ctx ends
// or the lease is lost (the caller should exit then; a restarted replica
// reloads every record from the cluster).
func RunWithLeaderElection(ctx context.Context, client kubernetes.Interface, c *Controller, lc LeaderConfig) error {
	if lc.Identity == "" {
		return errors.New("controller: LeaderConfig.Identity is required")
	}
	if lc.Lease == "" {
		lc.Lease = "sia-controller"
	}
	if lc.LeaseDuration == 0 {
		lc.LeaseDuration = 15 * time.Second
	}
	if lc.RenewDeadline == 0 {
		lc.RenewDeadline = 10 * time.Second
	}
	if lc.RetryPeriod == 0 {
		lc.RetryPeriod = 2 * time.Second
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: lc.Lease, Namespace: c.cfg.Namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: lc.Identity},
	}
	var runErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		// No release on cancel: the elector would release the Lease while a
		// round may still be writing; the next leader waits LeaseDuration.
		Lock: lock, ReleaseOnCancel: false,
		LeaseDuration: lc.LeaseDuration, RenewDeadline: lc.RenewDeadline, RetryPeriod: lc.RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				if lc.OnLeading != nil {
					lc.OnLeading(true)
				}
				// A new leader reads the records afresh: another replica
				// may have written them since this one last led.
				c.mu.Lock()
				c.entries = nil
				c.mu.Unlock()
				runErr = c.Run(ctx)
				if lc.OnLeading != nil {
					lc.OnLeading(false)
				}
			},
			OnStoppedLeading: cancel,
		},
		Name: lc.Lease,
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	return runErr
}
