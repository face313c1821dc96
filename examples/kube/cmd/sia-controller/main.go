// Command sia-controller runs the Sia scheduler as a Kubernetes controller for
// opted-in batch/v1 Indexed Jobs (see examples/kube/README.md).
package main

func main() {}
