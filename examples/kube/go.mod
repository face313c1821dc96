module github.com/sia-sched/sia/examples/kube

go 1.26.0

replace github.com/sia-sched/sia => ../..
