#!/usr/bin/env bash
# Builds the service's image from docker/Dockerfile with rootful podman: what CI does
# (test/image) and what an operator does on a machine without a Docker engine.
# Why each step is there: docs/container-image.md.
#
# Usage (as root, from anywhere): docker/build-image.sh [IMAGE]
#   IMAGE defaults to localhost/plant-store:local. Prints the image's id last.
set -euo pipefail
cd "$(dirname "$0")/.."

image="${1:-localhost/plant-store:local}"
# The Dockerfile's FROM, as podman resolves the short name (registries.conf's aliases).
base=docker.io/library/node:24-bookworm-slim
# The stand-in's Node.js and npm: the versions the project's own tooling pins.
export NODE_VERSION=24.21.0 NPM_VERSION=11.19.0
# This machine's settings for podman (runtime, cgroups, limits): docs/container-image.md.
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}"

.ci/install-podman

# A stand-in is rebuilt only when its recipe or versions change.
recipe_hash="$(cat docker/node-base/build.sh docker/node-base/docker-entrypoint.sh | sha256sum | cut -c1-12)"
key="node-$NODE_VERSION-npm-$NPM_VERSION-$recipe_hash"

stand_in_key() {
  podman image inspect --format '{{ index .Config.Labels "org.plant-store.stand-in" }}' "$base" 2>/dev/null |
    sed 's/^<no value>$//'
}

if podman image exists "$base"; then
  found="$(stand_in_key)"
  if [ -z "$found" ]; then
    echo "Base $base: the registry's image, already pulled"
  elif [ "$found" = "$key" ]; then
    echo "Base $base: the stand-in, cached ($key)"
  else
    echo "Base $base: a stand-in from another recipe ($found): building it again"
    docker/node-base/build.sh "$base" "$key"
  fi
elif timeout 120 podman pull --quiet "$base" >/dev/null 2>&1; then
  echo "Base $base: pulled from the registry"
else
  echo "Base $base: no registry could supply it: building the stand-in"
  docker/node-base/build.sh "$base" "$key"
fi

# npm ci inside the build reaches the registry through this machine's certificate
# authorities: a folder mounted over /root (the build's HOME) for the build's RUN steps
# only, so neither the bundle nor the .npmrc ends up in a layer.
build_home="$(mktemp -d /var/tmp/plant-store-build-home.XXXXXX)"
trap 'rm -rf "$build_home"' EXIT
mounts=()
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  cp /etc/ssl/certs/ca-certificates.crt "$build_home/ca-certificates.crt"
  printf 'cafile=/root/ca-certificates.crt\n' >"$build_home/.npmrc"
  mounts=(--volume "$build_home:/root")
fi

started=$SECONDS
# --format docker keeps HEALTHCHECK, which the OCI image format has no field for.
# --network=host: the build's npm ci uses this machine's network as it is.
podman build --format docker --network=host "${mounts[@]}" \
  --file docker/Dockerfile --tag "$image" . >&2
echo "Built $image in $((SECONDS - started)) s"
# Images left untagged by earlier builds (and their build stages), once a day old: the
# storage would otherwise grow with every change. Newer ones stay as the next build's cache.
podman image prune --force --filter until=24h >/dev/null
podman image inspect --format '{{.Id}}' "$image"
