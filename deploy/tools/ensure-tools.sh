#!/bin/sh
# Idempotent: install the Debian tools the deploy checks use, only where missing.
#   docker-compose  (1.29, validates deploy/docker-compose.yml offline: `docker-compose config`)
#   ip              (iproute2: network namespaces for `make fleet-test`)
# Needs root (CI runs as root); elsewhere it says what is missing and leaves the tests to skip.
set -u
missing=""
command -v docker-compose >/dev/null 2>&1 || missing="$missing docker-compose"
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "ensure-tools: not root; missing:$missing (the tests that need them will skip)" >&2
    exit 0
fi
echo "ensure-tools: apt-get install$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing >/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null && \
         apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing >/dev/null; } \
    || echo "ensure-tools: could not install$missing (the tests that need them will skip)" >&2
exit 0
