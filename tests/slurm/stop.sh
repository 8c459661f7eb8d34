#!/usr/bin/env bash
# Stop exactly the daemons tests/slurm/start.sh started (STATE_DIR/started.pids: "comm pid" lines),
# and removes the /etc/slurm links it made; daemons newest first, each only if /proc/PID/comm still names that daemon (pidfiles and pids go stale).
#   tests/slurm/stop.sh [STATE_DIR]      (default /tmp/tecb-slurm)
set -uo pipefail
STATE=${1:-/tmp/tecb-slurm}
LIST=$STATE/started.pids
# the /etc/slurm links start.sh created, if they still point into STATE_DIR
if [ -s "$STATE/created.links" ]; then
    while read -r link; do
        case $(readlink "$link" 2>/dev/null) in "$STATE"/*) rm -f "$link" ;; esac
    done <"$STATE/created.links"
    : >"$STATE/created.links"
fi
[ -s "$LIST" ] || exit 0
tac "$LIST" | while read -r comm pid; do
    [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$comm" ] || continue
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do [ -d /proc/"$pid" ] || break; sleep 0.1; done
    if [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$comm" ]; then kill -KILL "$pid" 2>/dev/null; fi
    echo "[tecb-slurm] stopped $comm (pid $pid)"
done
: >"$LIST"
