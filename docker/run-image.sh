#!/usr/bin/env bash
# Starts the image as the Kubernetes Deployment runs it, for an end-to-end suite or a
# look by hand, and returns once its health check passes; prints the container's id.
# Rootful podman, as docker/build-image.sh leaves it (docs/container-image.md).
#
#   DATABASE_URL=postgres://user:password@127.0.0.1:5432/db API_TOKENS=... \
#     docker/run-image.sh [podman run options...] [--image IMAGE]
#
# DATABASE_URL and API_TOKENS are passed by name, so their values never show in a
# process listing. A database on this machine's loopback (127.0.0.1 or localhost) is
# reached from the container at 10.0.2.2 (slirp4netns's address for the host's loopback):
# the URL is rewritten to it. Options such as --name, --publish 127.0.0.1:3000:3000 or
# --env SHUTDOWN_DELAY_MS=3000 go to podman run. Stop it with podman stop.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}"

image=localhost/plant-store:local
options=()
while [ "$#" -gt 0 ]; do
  if [ "$1" = --image ]; then
    image="${2:?--image needs a name}"
    shift 2
  else
    options+=("$1")
    shift
  fi
done

: "${DATABASE_URL:?set DATABASE_URL (the external PostgreSQL the service uses)}"
DATABASE_URL="$(printf '%s' "$DATABASE_URL" | sed -E 's#(@|//)(127\.0\.0\.1|localhost)([:/?]|$)#\110.0.2.2\3#')"
export DATABASE_URL
secrets=(--env DATABASE_URL)
if [ -n "${API_TOKENS:-}" ]; then
  secrets+=(--env API_TOKENS)
fi

# The Deployment's securityContext and limits (docker/k8s/deployment.yaml): a read-only
# root filesystem with a small /tmp, no capabilities, no privilege escalation, 256 MiB.
# podman schedules health checks with systemd timers, and says so on each start where no
# systemd runs: that line alone is dropped from what podman run says. A file, not a pipe:
# podman's conmon inherits any descriptor the shell leaves open, and would hold a pipe open.
errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
if ! container="$(podman run --detach \
  --read-only --tmpfs /tmp:rw,size=16m \
  --cap-drop=all --security-opt no-new-privileges \
  --memory 256m \
  --network slirp4netns:allow_host_loopback=true \
  "${secrets[@]}" "${options[@]}" "$image" 2>"$errors")"; then
  grep -v 'unable to get systemd connection' "$errors" >&2
  exit 1
fi
grep -v 'unable to get systemd connection' "$errors" >&2 || true

# Health checks run only on demand here (podman schedules them through systemd, which this
# machine does not run): ask until one passes or the container stops. 60 s is the
# Deployment's start-up budget (startupProbe: 30 x 2 s).
deadline=$((SECONDS + 60))
until podman healthcheck run "$container" >/dev/null 2>&1; do
  running="$(podman inspect --format '{{.State.Running}}' "$container")"
  if [ "$running" != true ] || [ "$SECONDS" -ge "$deadline" ]; then
    echo "The container did not become healthy (running: $running). Its log:" >&2
    podman logs "$container" >&2 || true
    exit 1
  fi
  sleep 0.25
done
echo "$container"
