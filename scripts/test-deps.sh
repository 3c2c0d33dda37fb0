#!/usr/bin/env bash
# System packages the tests use, installed from Debian's registry when missing:
# bubblewrap (the process sandbox's namespaces), procps (ps), util-linux (unshare, mount),
# mosquitto (the MQTT broker the MQTT transport tests start; also provides mosquitto_passwd).
set -euo pipefail
need=()
# systemd: systemd-analyze verifies targets/systemd's units (test/e2e/systemd-unit.test.ts); not started.
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v ps >/dev/null || need+=(procps)
command -v unshare >/dev/null || need+=(util-linux)
[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || need+=(mosquitto)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
