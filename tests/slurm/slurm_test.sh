#!/usr/bin/env bash
# The Slurm recipe of examples/slurm on a live one-node cluster started here: munged,
# slurmctld and slurmd (Debian's slurm-wlm and munge) under one private temporary folder with
# its own slurm.conf (free ports, state, logs and spool inside, no cgroups, auth/munge with a
# key made here and munged's socket there), started as root without systemd. submit.sh sends
# the array of K parts of a real clip and the join that depends on it; the joined AVI must equal
# a one-pass encode byte for byte. Whatever happens, the daemons started here are stopped by
# their process ids and the folder is removed.
#
#   slurm_test.sh MJPEG SOURCE_DIR MEDIA_DIR [K]
#
# MEDIA_DIR is the shared test media (the environment variable MJPEG_MEDIA_DIR overrides it);
# the clip is video/flower.mp4 (MJPEG_SLURM_CLIP names another). It prints the wall time of
# the one-pass encode and of the array with its join, from submission to the join's end (a
# figure, not a check; MJPEG_SLURM_BASELINE=1 adds the same for an array that does nothing).
# The whole test ends itself after MJPEG_SLURM_TEST_SECONDS
# (default 780), before CTest's timeout, so that its clean-up always runs.
#
# Exit 0 = pass, 77 = skipped (not root, or Slurm / munge not installed or not startable: the
# reason is printed), anything else = fail.
set -uo pipefail

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

[[ $# -ge 3 ]] || { echo "usage: $0 MJPEG SOURCE_DIR MEDIA_DIR [K]" >&2; exit 2; }
MJPEG=$(realpath "$1")
SOURCE_DIR=$(realpath "$2")
MEDIA_DIR=$(realpath "${MJPEG_MEDIA_DIR:-$3}")
K=${4:-4}
CLIP=${MJPEG_SLURM_CLIP:-$MEDIA_DIR/video/flower.mp4}
[[ -f $CLIP ]] || die "test clip $CLIP not found (MJPEG_MEDIA_DIR)"
[[ $(id -u) -eq 0 ]] || skip "not root: a private cluster's munged and slurmd are started as root"
for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo python3; do
  command -v "$tool" >/dev/null ||
    skip "$tool not found (Debian: apt-get install slurm-wlm munge; .ci/setup installs them)"
done

dir=$(mktemp -d /tmp/mjpeg-slurm.XXXXXX) || die "cannot make a temporary folder"
chmod 700 "$dir"
pids=()
watchdog=
stop_daemons() {
  local pid n
  # Newest first: slurmd, slurmctld, then munged, which the other two need to shut down.
  for ((n = ${#pids[@]} - 1; n >= 0; n--)); do
    pid=${pids[n]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  pids=()
}
show_logs() {
  local f
  for f in "$dir"/*.log "$dir"/work/*.out; do
    [[ -f $f ]] || continue
    echo "--- $(basename "$f") (last lines)" >&2
    tail -n 15 "$f" >&2
  done
}
finish() {
  local rc=$?
  if [[ -n $watchdog ]]; then
    kill "$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
  fi
  [[ $rc -ne 0 && $rc -ne 77 ]] && show_logs
  cancel_jobs
  stop_daemons
  rm -rf "$dir"
  exit "$rc"
}
trap finish EXIT
trap 'echo "FAIL: stopped by a signal (or the watchdog)" >&2; exit 130' INT TERM
# The watchdog: a subshell that ends the test after the time given; stopped by finish(), it
# stops its own sleep too (nothing of the test outlives it, nor holds CTest's output open).
watch() {
  local sleeper
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep "$1" &
  sleeper=$!
  wait "$sleeper" && kill -TERM $$
}
watch "${MJPEG_SLURM_TEST_SECONDS:-780}" >/dev/null 2>&1 &
watchdog=$!
# Jobs still queued or running when the test ends are cancelled (their steps end with them)
# before the daemons stop.
jobs_submitted=
cancel_jobs() {
  [[ -n $jobs_submitted ]] || return 0
  scancel $jobs_submitted 2>/dev/null
  for _ in $(seq 50); do
    [[ -z $(squeue -h 2>/dev/null) ]] && break
    sleep 0.2
  done
}

# Free TCP ports for the controller and the node daemon, chosen by the kernel.
read -r ctld_port node_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')

mkdir -p "$dir/state" "$dir/spool" "$dir/work" || die "cannot make folders in $dir"
mungekey --create --keyfile="$dir/munge.key" >/dev/null 2>&1 ||
  skip "mungekey could not create a key"
chmod 600 "$dir/munge.key"
munged --foreground --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" \
  >"$dir/munged.out" 2>&1 &
pids+=($!)

host=$(hostname -s)
cpus=$(nproc)
cat >"$dir/slurm.conf" <<CONF
ClusterName=mjpegtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
NodeName=mjpegnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=mjpeg Nodes=mjpegnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$dir/slurm.conf

# Bounded waits: a busy 2-core machine starts these in about a second.
wait_for() {  # SECONDS WHAT COMMAND...
  local limit=$1 what=$2
  shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.2
  done
}
wait_for 20 munged test -S "$dir/munge.socket" ||
  skip "munged did not start: $(tail -n 3 "$dir/munged.out" "$dir/munged.log" 2>/dev/null | tr '\n' ' ')"
slurmctld -D -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
wait_for 30 slurmctld scontrol ping ||
  skip "slurmctld did not start: $(tail -n 3 "$dir/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
slurmd -D -N mjpegnode -f "$dir/slurm.conf" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [[ $(sinfo -h -n mjpegnode -o %T) == idle* ]]; }
wait_for 30 slurmd node_idle ||
  skip "slurmd did not come up: $(sinfo -h -o '%N %T' 2>&1) $(tail -n 3 "$dir/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "cluster up: $(sinfo -h -o '%P %N %T %c CPUs')"

cd "$dir/work" || die "no work folder"
start=$(date +%s.%N)
"$MJPEG" encode "$CLIP" -o one-pass.avi --mode cpu --quiet || die "the one-pass encode failed"
one_pass_s=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')

export MJPEG MJPEG_MODE=cpu
start=$(date +%s.%N)
read -r array join < <("$SOURCE_DIR/examples/slurm/submit.sh" "$CLIP" "$dir/work/joined.avi" "$K") ||
  die "submit.sh failed"
[[ -n ${join:-} ]] || die "submit.sh printed no job ids"
jobs_submitted="$array $join"
echo "submitted: array $array ($K tasks), join $join"

state_of() { scontrol show job "$1" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
join_done() {
  case $(state_of "$join") in
    COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED) return 0 ;;
  esac
  return 1
}
wait_for 600 jobs join_done || die "the join did not finish within 600 s: $(squeue -h 2>&1 | head -5)"
array_s=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
[[ $(state_of "$join") == COMPLETED ]] || die "the join ended $(state_of "$join")"
for ((i = 1; i <= K; i++)); do
  s=$(scontrol show job "${array}_$i" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1)
  [[ $s == JobState=COMPLETED ]] || die "array task $i: $s"
done
[[ $(ls joined.avi.parts | wc -l) -eq $K ]] || die "$(ls joined.avi.parts | wc -l) parts written, expected $K"
cmp -s joined.avi one-pass.avi || die "joined.avi ($(stat -c %s joined.avi) bytes) differs from one-pass.avi ($(stat -c %s one-pass.avi) bytes)"
printf 'wall time: one pass %.2f s; array of %d tasks and the join %.2f s (%.2fx the one pass)\n' \
  "$one_pass_s" "$K" "$array_s" "$(awk -v a="$array_s" -v b="$one_pass_s" 'BEGIN { print a / b }')"
if [[ -n ${MJPEG_SLURM_BASELINE:-} ]]; then
  # What Slurm itself adds: the same array and dependent job doing nothing.
  start=$(date +%s.%N)
  empty=$(sbatch --parsable --array="1-$K" --wrap=true) || die "sbatch of the empty array failed"
  join=$(sbatch --parsable --dependency="afterok:${empty%%;*}" --wrap=true) || die "sbatch failed"
  jobs_submitted="$jobs_submitted ${empty%%;*} $join"
  wait_for 120 jobs join_done || die "the empty array's job did not finish"
  printf 'wall time: an empty array of %d tasks and its dependent job %.2f s (Slurm alone)\n' \
    "$K" "$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')"
fi
echo "ok: $K array tasks and the dependent join on Slurm $(sinfo -V | cut -d' ' -f2): joined.avi == one pass ($(stat -c %s joined.avi) bytes)"
