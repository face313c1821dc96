// Package metrics adapts sia's Options.Observer to Prometheus (client_golang) and
// serves /metrics, /healthz and /readyz. Every metric has the sia_ prefix.
package metrics
