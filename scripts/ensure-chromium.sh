#!/usr/bin/env bash
# Debian's chromium and chromedriver for the browser test (tests/integration/test_console_browser.py).
# Idempotent: installs only what is missing, and only as root with apt-get (CI runs `make test` as
# root on a fresh machine). Otherwise it says what to install; the browser test then fails with the
# same advice.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium and chromium-driver (for the browser test)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
  exit 0
fi
echo "warning: chromium/chromedriver missing; install them (apt-get install chromium chromium-driver) for the browser test" >&2
