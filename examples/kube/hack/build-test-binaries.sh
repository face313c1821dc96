#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that the end-to-end tests of
# examples/kube run against, from the Go module proxy only (no release
# tarballs), into a cache directory keyed by version. A no-op when both
# binaries are already there.
#
#   examples/kube/hack/build-test-binaries.sh            # builds or reuses
#   SIA_K8S_BIN=/some/dir examples/kube/hack/build-test-binaries.sh
#
# Recipe: a throwaway module in a temp dir that requires k8s.io/kubernetes
# vX.Y.Z and replaces every k8s.io staging module (kubernetes' own go.mod
# points them at ./staging, which a dependent module cannot use) with its
# v0.Y.Z release; etcd's server at the version kubernetes requires. The
# version is linked in with -X, or clients cannot parse the server's
# version. Both binaries are built with one go.mod, so etcd's server
# is built with the dependency versions kubernetes' graph selects. Nothing of this module is kept: no go.sum of kubernetes lands in
# the repository. Cold: ~10 min on 2 cores, ~3 GB peak memory, ~160 MB of
# binaries.
#
# Prints the directory to use as SIA_K8S_BIN on its last line.
set -euo pipefail

start=$(date +%s)
K8S_VERSION=${SIA_K8S_VERSION:-v1.37.2}
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
patch=${K8S_VERSION##*.}
STAGING_VERSION="v0.${minor}.${patch}"
DEST=${SIA_K8S_BIN:-${HOME}/.cache/sia-k8s/${K8S_VERSION}}

elapsed() { echo "$(( $(date +%s) - start ))"; }

have_binaries() {
  [ -x "$DEST/kube-apiserver" ] && [ -x "$DEST/etcd" ] &&
    "$DEST/kube-apiserver" --version 2>/dev/null | grep -q "Kubernetes ${K8S_VERSION}\$"
}

if have_binaries; then
  echo "build-test-binaries: cached: $DEST (kube-apiserver ${K8S_VERSION}, $("$DEST/etcd" --version | head -1)); wall time $(elapsed) s"
  echo "$DEST"
  exit 0
fi

export GOFLAGS=-mod=mod
export GOWORK=off
work=$(mktemp -d "${TMPDIR:-/tmp}/sia-k8s-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "build-test-binaries: building kube-apiserver ${K8S_VERSION} and etcd into $DEST (temp module $work)"
go mod download "k8s.io/kubernetes@${K8S_VERSION}"
k8s_mod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/${K8S_VERSION}.mod"
[ -f "$k8s_mod" ] || { echo "build-test-binaries: $k8s_mod missing after go mod download" >&2; exit 1; }

# The staging modules: kubernetes' go.mod replaces them with ./staging/src/k8s.io/<name>.
staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*$#\1#p' "$k8s_mod" | sort -u)
[ -n "$staging" ] || { echo "build-test-binaries: no staging replace lines in $k8s_mod" >&2; exit 1; }
# etcd's server: the newest patch release of the minor version kubernetes
# requires (v1.37.2 requires v3.7.0; this builds v3.7.3), or SIA_ETCD_VERSION.
etcd_required=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$k8s_mod")
[ -n "$etcd_required" ] || { echo "build-test-binaries: kubernetes ${K8S_VERSION} does not require go.etcd.io/etcd/server/v3" >&2; exit 1; }
etcd_version=${SIA_ETCD_VERSION:-${etcd_required%.*}}

{
  echo "module sia-k8s-test-binaries"
  echo
  echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
  echo
  echo "require ("
  echo "	k8s.io/kubernetes ${K8S_VERSION}"
  echo "	go.etcd.io/etcd/server/v3 ${etcd_required}"
  echo ")"
  echo
  for m in $staging; do echo "replace $m => $m ${STAGING_VERSION}"; done
} > go.mod
echo "build-test-binaries: $(echo "$staging" | wc -l) staging replaces at ${STAGING_VERSION}; etcd ${etcd_version} (kubernetes requires ${etcd_required})"

# tool lines make go.sum complete for both main packages.
go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@${K8S_VERSION}" "go.etcd.io/etcd/server/v3@${etcd_version}"

mkdir -p "$DEST"
ldflags="-X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
go build -trimpath -o "$DEST/kube-apiserver.tmp" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kube-apiserver
echo "build-test-binaries: kube-apiserver built at $(elapsed) s"
go build -trimpath -o "$DEST/etcd.tmp" go.etcd.io/etcd/server/v3
mv "$DEST/kube-apiserver.tmp" "$DEST/kube-apiserver"
mv "$DEST/etcd.tmp" "$DEST/etcd"

have_binaries || { echo "build-test-binaries: built binaries fail the version check" >&2; "$DEST/kube-apiserver" --version >&2 || true; exit 1; }
echo "build-test-binaries: built: $DEST (kube-apiserver ${K8S_VERSION}, $("$DEST/etcd" --version | head -1)); wall time $(elapsed) s"
echo "$DEST"
