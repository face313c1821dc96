// Package controller runs Sia's scheduling rounds against a Kubernetes cluster:
// informers on Nodes, opted-in Jobs and Pods, a round every period and on
// events (debounced), each under a deadline, state persisted in ConfigMaps
// of the controller's namespace, leader election through a Lease.
package controller
