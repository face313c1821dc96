//go:build !clp

package simcli

// taggedPolicies are the built-in policies that need a build tag; without
// the clp tag there are none (gavel-clp needs it).
func taggedPolicies() []Policy { return nil }
