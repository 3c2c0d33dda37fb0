#!/bin/sh
# Installs a built claw-edge (dist/) and one agent as a systemd service (docs/boards.md "systemd").
#
#   sudo sh targets/systemd/install.sh path/to/claw.yaml [path/to/claw.runtime.yaml]
#   sudo sh targets/systemd/install.sh path/to/agent-dir/ [path/to/claw.runtime.yaml]
#
# A directory is an agent of several files (claw.yaml and what it references): all of it is copied to /etc/claw
# but its state (.claw-data) and its claw.runtime.yaml, whose settings are taken with data_dir set to the
# state directory unless a runtime configuration is given or already installed.
#
# Lays out: /opt/claw-edge (dist/), /usr/local/bin/claw (launcher), /etc/claw/{claw.yaml,claw.runtime.yaml},
# /etc/claw/credentials/ (root-only; one file per secret_ref, named as the LoadCredential= lines say),
# the units claw.service, claw-health.service and claw-health.timer, and the system user `claw`.
# An existing claw.runtime.yaml or credential is never overwritten.
#
# DESTDIR=/some/root installs into that tree only (no user, no systemctl): what the test uses, and a way
# to build a board image. CLAW_NODE picks the JavaScript runtime the launcher starts (default: node; bun works).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dist=${CLAW_DIST:-$here/../../dist}
manifest=${1:?usage: install.sh <claw.yaml | agent-dir> [claw.runtime.yaml]}
runtime_config=${2:-}
agent_dir=
if [ -d "$manifest" ]; then
  agent_dir=$manifest
  manifest=$agent_dir/claw.yaml
  [ -f "$manifest" ] || { echo "install.sh: $agent_dir has no claw.yaml" >&2; exit 1; }
fi
root=${DESTDIR:-}
node=${CLAW_NODE:-node}

[ -f "$dist/claw.mjs" ] || { echo "install.sh: no $dist/claw.mjs (run npm run build first)" >&2; exit 1; }
[ -n "$root" ] || [ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root (or set DESTDIR)" >&2; exit 1; }

install -d -m 0755 "$root/opt/claw-edge" "$root/usr/local/bin" "$root/etc/systemd/system"
rm -rf "$root/opt/claw-edge/chunks"
cp -R "$dist/." "$root/opt/claw-edge/"
# A launcher instead of a symlink: the unit names one fixed path, and the runtime is chosen here.
printf '#!/bin/sh\nexec %s /opt/claw-edge/claw.mjs "$@"\n' "$node" > "$root/usr/local/bin/claw"
chmod 0755 "$root/usr/local/bin/claw"

install -d -m 0755 "$root/etc/claw"
install -d -m 0700 "$root/etc/claw/credentials"
if [ -n "$agent_dir" ]; then
  # Everything the manifest may reference, as laid out beside it; never its state or its runtime configuration.
  (cd "$agent_dir" && tar --exclude=./.claw-data --exclude=./claw.runtime.yaml -cf - .) | tar -xf - -C "$root/etc/claw" --no-same-owner
else
  install -m 0644 "$manifest" "$root/etc/claw/claw.yaml"
fi
if [ -e "$root/etc/claw/claw.runtime.yaml" ]; then
  echo "install.sh: keeping the existing /etc/claw/claw.runtime.yaml"
elif [ -n "$runtime_config" ]; then
  install -m 0644 "$runtime_config" "$root/etc/claw/claw.runtime.yaml"
elif [ -n "$agent_dir" ] && [ -f "$agent_dir/claw.runtime.yaml" ]; then
  # The agent's own settings (channels, MCP servers, heartbeat), its state moved to the unit's StateDirectory.
  sed 's|^data_dir:.*$|data_dir: /var/lib/claw|' "$agent_dir/claw.runtime.yaml" > "$root/etc/claw/claw.runtime.yaml"
  grep -q '^data_dir:' "$root/etc/claw/claw.runtime.yaml" || printf 'data_dir: /var/lib/claw\n' >> "$root/etc/claw/claw.runtime.yaml"
  chmod 0644 "$root/etc/claw/claw.runtime.yaml"
else
  printf '# Written by install.sh: state in the unit'"'"'s StateDirectory (docs/boards.md).\ndata_dir: /var/lib/claw\n' > "$root/etc/claw/claw.runtime.yaml"
fi
grep -q '^data_dir: */var/lib/claw/* *$' "$root/etc/claw/claw.runtime.yaml" ||
  echo "install.sh: warning: /etc/claw/claw.runtime.yaml should say 'data_dir: /var/lib/claw' (the only writable state directory)" >&2
# Every LoadCredential= source must exist or the unit does not start: create empty placeholders to fill in.
for src in $(sed -n 's/^LoadCredential=[^:]*://p' "$here/claw.service"); do
  [ -e "$root$src" ] || { install -m 0600 /dev/null "$root$src"; echo "install.sh: fill in $src"; }
done
for unit in claw.service claw-health.service claw-health.timer; do
  install -m 0644 "$here/$unit" "$root/etc/systemd/system/$unit"
done

[ -n "$root" ] && exit 0
id -u claw >/dev/null 2>&1 || useradd --system --home-dir /var/lib/claw --no-create-home --shell /usr/sbin/nologin claw
# The manifest must validate as the service user, before systemd starts restarting it.
runuser -u claw -- /usr/local/bin/claw validate /etc/claw/claw.yaml
systemctl daemon-reload
systemctl enable --now claw.service claw-health.timer
echo "install.sh: started; follow it with: journalctl -u claw -f"
