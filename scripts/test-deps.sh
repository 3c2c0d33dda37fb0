#!/usr/bin/env bash
# System packages the tests use, installed from Debian's registry when missing:
# bubblewrap (the process sandbox's namespaces), procps (ps), util-linux (unshare, mount),
# mosquitto (the MQTT broker the MQTT transport tests start; also provides mosquitto_passwd),
# qemu-user-static (runs the arm64, armv7l and riscv64 runtimes of test/e2e/xarch.test.ts; called explicitly,
# so binfmt registration is not needed).
set -euo pipefail
need=()
# systemd: systemd-analyze verifies targets/systemd's units (test/e2e/systemd-unit.test.ts); not started.
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v ps >/dev/null || need+=(procps)
command -v unshare >/dev/null || need+=(util-linux)
[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || need+=(mosquitto)
command -v qemu-aarch64-static >/dev/null || command -v qemu-aarch64 >/dev/null || need+=(qemu-user-static)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
