#!/bin/sh
# Checks systemd/pinproxy.{service,socket} without systemd as PID 1:
#  - `systemd-analyze verify` must print nothing (unknown keys are only stderr
#    warnings with exit 0, so any output fails the check);
#  - `systemd-analyze security --offline=true` must rate exposure <= 1.5.
# verify insists that ExecStart= binaries exist, so it runs against a throwaway
# --root holding the system's unit files, a stand-in /usr/local/bin/pinproxy
# and /bin/kill; the units themselves are checked unmodified.
# Usage: Tests/Tools/check-systemd-units.sh   (from the repository root)
set -eu
units=$(cd "$(dirname "$0")/../../systemd" && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/local/bin" "$root/bin" "$root/etc/systemd/system" "$root/usr/lib/systemd"
printf '#!/bin/sh\nexit 0\n' > "$root/usr/local/bin/pinproxy"
chmod 755 "$root/usr/local/bin/pinproxy"
cp /bin/kill "$root/bin/kill"
cp -r /usr/lib/systemd/system "$root/usr/lib/systemd/"
cp "$units/pinproxy.service" "$units/pinproxy.socket" "$root/etc/systemd/system/"

output=$(systemd-analyze verify --root="$root" pinproxy.service pinproxy.socket 2>&1) || {
    echo "systemd-analyze verify failed:"; echo "$output"; exit 1; }
if [ -n "$output" ]; then
    echo "systemd-analyze verify printed diagnostics:"; echo "$output"; exit 1
fi

# --threshold is on a 0-100 scale: 15 = exposure 1.5.
report=$(systemd-analyze security --offline=true --threshold=15 "$units/pinproxy.service" 2>&1) || {
    echo "$report" | grep -E '✗|exposure'; echo "exposure above 1.5"; exit 1; }
echo "$report" | grep 'Overall exposure'
echo "units OK"
