#!/usr/bin/env bash
# Start a real single-node SLURM on localhost for the SLURM profile test (see tests/test_slurm.py).
#   tests/slurm/start.sh [STATE_DIR]      (default /tmp/tecb-slurm)
# Installs Debian's slurmctld/slurmd/slurmdbd/munge/mariadb when missing (needs root + apt-get), writes its
# configuration under STATE_DIR/etc (nothing in /etc/slurm), starts munged, mariadbd (127.0.0.1), slurmdbd,
# slurmctld and slurmd with one fake GPU and two partitions (cpu, gpu) on the node `localhost`.
# It links /etc/slurm/{slurm,gres}.conf to them (job steps need it) when no real configuration is there.
# Every daemon it starts is recorded as "comm pid" in STATE_DIR/started.pids; tests/slurm/stop.sh stops
# exactly those. Idempotent: a daemon already running from STATE_DIR is reused, not started twice.
# Clients need:  export SLURM_CONF=STATE_DIR/etc/slurm.conf
# TECB_SLURM_WAIT: how long (seconds, default 300) to wait for each daemon, the database and the node to come
# up before giving up; a slow or busy machine (a CI runner) may need minutes, a healthy one seconds.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (installs packages, starts daemons)"; exit 3; }

STATE=${1:-/tmp/tecb-slurm}
WAIT=${TECB_SLURM_WAIT:-300}
[[ $WAIT =~ ^[0-9]+$ ]] || { echo "TECB_SLURM_WAIT must be a number of seconds, not '$WAIT'"; exit 2; }
ETC=$STATE/etc
mkdir -p "$STATE" "$ETC" "$STATE/log" "$STATE/spool/ctld" "$STATE/spool/d" "$STATE/run"
touch "$STATE/started.pids"
export SLURM_CONF=$ETC/slurm.conf

say() { echo "[tecb-slurm] $*"; }


# --- 1. packages ---------------------------------------------------------------------------------
need=()
for bin in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client slurmdbd:slurmdbd munged:munge mariadbd:mariadb-server; do
    command -v "${bin%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${bin%%:*}" ] || need+=("${bin#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || { echo "SKIP: SLURM is not installed and apt-get is missing"; exit 3; }
    say "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${need[@]}" >"$STATE/log/apt.log" 2>&1 || {
        apt-get update -qq >>"$STATE/log/apt.log" 2>&1
        apt-get install -y -qq "${need[@]}" >>"$STATE/log/apt.log" 2>&1
    } || { echo "apt-get install ${need[*]} failed, see $STATE/log/apt.log"; exit 1; }
fi
export PATH=$PATH:/usr/sbin

# alive COMM PIDFILE: the pid in PIDFILE if that process is alive and is COMM (pidfiles go stale)
alive() {
    local pid
    [ -s "$2" ] || return 1
    pid=$(tr -dc 0-9 <"$2")
    [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$1" ] && echo "$pid"
}
# until_ok COMMAND...: run COMMAND every 0.2 s until it succeeds (0) or $WAIT seconds have passed (1)
until_ok() {
    local end=$((SECONDS + WAIT))
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}
# wait_for COMM PIDFILE: wait (TECB_SLURM_WAIT s at most) for the daemon's pidfile, record it as started by us
wait_for() {
    local pid
    if until_ok alive "$1" "$2" >/dev/null; then
        pid=$(alive "$1" "$2")
        echo "$1 $pid" >>"$STATE/started.pids"; say "$1 started (pid $pid)"; return 0
    fi
    echo "$1 did not start within ${WAIT} s (TECB_SLURM_WAIT); its log is in $STATE/log/"; return 1
}

# --- 2. munge ---------------------------------------------------------------------------------------
[ -s /etc/munge/munge.key ] || { mungekey --create 2>/dev/null || create-munge-key -f; }
chown munge:munge /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge && chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! alive munged /run/munge/munged.pid >/dev/null; then
    su -s /bin/sh munge -c "munged --force"
    wait_for munged /run/munge/munged.pid
fi

# --- 3. mariadb (127.0.0.1 and a unix socket only) + the accounting database ------------------------
DB=$STATE/mysql
if [ ! -d "$DB/mysql" ]; then
    mkdir -p "$DB" && chown mysql:mysql "$DB"
    mariadb-install-db --user=mysql --datadir="$DB" --auth-root-authentication-method=socket >"$STATE/log/mariadb-install.log" 2>&1
fi
chown mysql:mysql "$STATE/run"
if ! alive mariadbd "$STATE/run/mysqld.pid" >/dev/null; then
    mariadbd --user=mysql --datadir="$DB" --bind-address=127.0.0.1 --port=3307 \
        --socket="$STATE/run/mysqld.sock" --pid-file="$STATE/run/mysqld.pid" \
        --log-error="$STATE/log/mariadb.log" >/dev/null 2>&1 &
    wait_for mariadbd "$STATE/run/mysqld.pid"
fi
db_up() { mariadb --socket="$STATE/run/mysqld.sock" -e "select 1" >/dev/null 2>&1; }
until_ok db_up || { echo "mariadb does not answer within ${WAIT} s (TECB_SLURM_WAIT); see $STATE/log/"; exit 1; }
mariadb --socket="$STATE/run/mysqld.sock" -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'tecb-test';
  CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'tecb-test';
  GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
  FLUSH PRIVILEGES;"

# --- 4. configuration (node size from slurmd -C; one fake GPU) ----------------------------------------
node=$(slurmd -C | head -1)
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node")
boards=$(sed -n 's/.*Boards=\([0-9]*\).*/\1/p' <<<"$node")
sockets=$(sed -n 's/.*SocketsPerBoard=\([0-9]*\).*/\1/p' <<<"$node")
cores=$(sed -n 's/.*CoresPerSocket=\([0-9]*\).*/\1/p' <<<"$node")
threads=$(sed -n 's/.*ThreadsPerCore=\([0-9]*\).*/\1/p' <<<"$node")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
mem=$((mem * 9 / 10))   # a RealMemory above the real one drains the node
cat >"$ETC/slurm.conf.new" <<EOF
ClusterName=tecb
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE/spool/ctld
SlurmdSpoolDir=$STATE/spool/d
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
MinJobAge=600
ReturnToService=2
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
JobCompType=jobcomp/none
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus Boards=$boards SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=localhost MaxTime=INFINITE State=UP
EOF
mv "$ETC/slurm.conf.new" "$ETC/slurm.conf"
echo "NodeName=localhost Name=gpu File=/dev/null" >"$ETC/gres.conf"
cat >"$ETC/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
PidFile=$STATE/run/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=3307
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=tecb-test
EOF
chmod 600 "$ETC/slurmdbd.conf"
# Job steps (srun inside a batch job) do not see SLURM_CONF: link the config into /etc/slurm, unless a real
# configuration is there (then this machine is someone's SLURM node: do not touch it).
mkdir -p /etc/slurm
for f in slurm.conf gres.conf; do
    if [ -L "/etc/slurm/$f" ] && [ "$(readlink "/etc/slurm/$f")" = "$ETC/$f" ]; then continue; fi
    [ -e "/etc/slurm/$f" ] && { echo "SKIP: /etc/slurm/$f exists (a real SLURM configuration); not touching it"; exit 3; }
    ln -s "$ETC/$f" "/etc/slurm/$f" && echo "/etc/slurm/$f" >>"$STATE/created.links"
done

# --- 5. slurmdbd, cluster + account, slurmctld, slurmd --------------------------------------------------
if ! alive slurmdbd "$STATE/run/slurmdbd.pid" >/dev/null; then
    slurmdbd && wait_for slurmdbd "$STATE/run/slurmdbd.pid"
fi
dbd_up() { sacctmgr -n list cluster >/dev/null 2>&1; }
until_ok dbd_up || { echo "slurmdbd does not answer within ${WAIT} s (TECB_SLURM_WAIT); see $STATE/log/"; exit 1; }
sacctmgr -n list cluster format=cluster -P | grep -qx tecb || sacctmgr -i add cluster tecb >/dev/null
sacctmgr -n list account format=account -P | grep -qx tecb || sacctmgr -i add account tecb cluster=tecb >/dev/null
sacctmgr -n list user format=user -P | grep -qx root || sacctmgr -i add user root account=tecb >/dev/null
if ! alive slurmctld "$STATE/run/slurmctld.pid" >/dev/null; then
    slurmctld && wait_for slurmctld "$STATE/run/slurmctld.pid"
fi
if ! alive slurmd "$STATE/run/slurmd.pid" >/dev/null; then
    slurmd -N localhost && wait_for slurmd "$STATE/run/slurmd.pid"
fi
st=
node_ready() {
    st=$(sinfo -h -n localhost -o %T 2>/dev/null | head -1)
    case $st in idle | mixed | allocated) return 0 ;; *) return 1 ;; esac
}
if until_ok node_ready; then say "node localhost is $st"; exit 0; fi
echo "node localhost is not ready within ${WAIT} s (TECB_SLURM_WAIT; state: ${st:-unknown}); see $STATE/log/"
exit 1
