#!/usr/bin/env bash
# The README's Slurm array script on a real Slurm (DESIGN §8): one node on
# 127.0.0.1 with its own munged, slurmctld and slurmd, their state under a
# temporary folder. It submits the script against scripts/fakeprovider
# (100 ms a reply), stops one shard with scancel mid-way, resubmits it,
# and checks that every task has one result line and that no task finished
# before the stop was sent again. Then it stops its daemons.
#
# Slurm missing: as root under CI=true it installs Debian's slurm-wlm and
# munge; otherwise it says why and skips (exit 0 with SKIP on stderr).
# ASK_REQUIRE_SLURM=1 makes a skip a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

skip() {
  echo "SKIP slurm-test: $*" >&2
  if [ -n "${ASK_REQUIRE_SLURM:-}" ]; then exit 1; fi
  exit 0
}

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== apt-get install slurm-wlm munge (the Slurm test)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  else
    skip "Slurm is not installed (slurmctld, munged); as root with CI=true this script installs Debian's slurm-wlm and munge"
  fi
fi
[ "$(id -u)" = 0 ] || skip "slurmd must start as root to run jobs (this is uid $(id -u))"

tmp=$(mktemp -d /tmp/ask-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
stop_all() {
  scancel --quiet --user=root 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${KEEP_SLURM_TMP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap stop_all EXIT

echo "== build ask and the fake provider"
mkdir -p "$tmp/bin"
go build -o "$tmp/bin/ask" ./cmd/ask
go build -o "$tmp/bin/fakeprovider" ./scripts/fakeprovider

# munged with a key and a socket of its own.
mkdir -p "$tmp/munge" && chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" --foreground 2>"$tmp/munge/munged.out" &
pids+=($!)

# Ports of its own, so as not to meet another Slurm.
port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    # Nothing answers there: free (bash's /dev/tcp, no other tool needed).
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
}
ctld_port=$(port)
d_port=$(port)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/work"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=asktest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ask Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$tmp/slurm.conf

# Wait for munged's socket, then start Slurm.
for _ in $(seq 50); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
for i in $(seq 100); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then break; fi
  if [ "$i" = 100 ]; then
    echo "Slurm did not come up:" >&2
    tail -20 "$tmp/slurmctld.log" "$tmp/slurmd.log" "$tmp/slurmctld.out" "$tmp/slurmd.out" 2>&1 >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "== Slurm is up: $(sinfo -h -o '%N %T %c CPUs')"

# The fake model, 100 ms a reply, logging each request's prompt.
"$tmp/bin/fakeprovider" -latency 100ms -log "$tmp/requests.jsonl" >"$tmp/fake.url" &
pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/fake.url" ] && break; sleep 0.1; done
url=$(head -1 "$tmp/fake.url")

# 200 tasks, and the README's script as a user saves it, at a pace the
# fake allows (the README's --rate is sized for a real provider).
cd "$tmp/work"
for i in $(seq 0 199); do printf '{"id":"t%d","prompt":"p%d","no-tools":true}\n' "$i" "$i"; done > tasks.jsonl
awk '/^```bash$/ {b = 1; s = ""; next} b && /^```$/ {b = 0; if (s ~ /#SBATCH/) {printf "%s", s; exit}; next} b {s = s $0 "\n"}' \
  "$repo/README.md" | sed 's#--rate 110/m#--rate 20/s -j 2#' > ask-batch.sh
grep -q -- '--shard auto/4' ask-batch.sh || { echo "README.md: no Slurm script with --shard auto/4" >&2; exit 1; }
export PATH=$tmp/bin:$PATH ASK_PROVIDER=openai ASK_BASE_URL=$url OPENAI_API_KEY=fake-test-not-a-real-key-0000
export HOME=$tmp/work XDG_STATE_HOME=$tmp/work/state

echo "== sbatch the array"
job=$(sbatch --parsable --export=ALL ask-batch.sh)
# Stop shard 1 once it has written some results.
for i in $(seq 300); do
  n=0
  [ -f results-1.jsonl ] && n=$(wc -l < results-1.jsonl)
  [ "$n" -ge 10 ] && break
  [ "$i" = 300 ] && { echo "shard 1 wrote nothing in 60 s" >&2; tail -20 ask-batch-1.log "$tmp/slurmd.log" >&2 || true; exit 1; }
  sleep 0.2
done
scancel "${job}_1"
echo "== scancel ${job}_1 after $(wc -l < results-1.jsonl) results"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.2
done
killed_at=$(date +%s%N)
cp results-1.jsonl finished-1.jsonl
finished=$(wc -l < finished-1.jsonl)
[ "$finished" -lt 50 ] || { echo "shard 1 ended before scancel stopped it ($finished results): no kill was tested" >&2; exit 1; }

echo "== resubmit shard 1 alone"
job2=$(sbatch --parsable --export=ALL --array=1 ask-batch.sh)
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job2" 2>/dev/null)" ] && break
  sleep 0.2
done

# Every task once, in the merged files.
cat results-0.jsonl results-1.jsonl results-2.jsonl results-3.jsonl > merged.jsonl
got=$(grep -o '"id":"t[0-9]*"' merged.jsonl | sort | uniq -c | awk '$1 != 1' | wc -l)
total=$(grep -o '"id":"t[0-9]*"' merged.jsonl | sort -u | wc -l)
answered=$(grep -c '"status":"completed","exit_code":0' merged.jsonl || true)
if [ "$got" != 0 ] || [ "$total" != 200 ] || [ "$answered" != 200 ]; then
  echo "merged: $total ids, $got with more than one line, $answered answered; want 200, 0, 200" >&2
  tail -5 ask-batch-*.log >&2 || true
  exit 1
fi
# No task finished before the stop was sent again after it.
again=0
while read -r id; do
  p=p${id#t}
  n=$(awk -v p="\"prompt\":\"$p\"" -v t="$killed_at" 'index($0, p) { match($0, /"arrived_ns":[0-9]+/); a = substr($0, RSTART + 13, RLENGTH - 13); if (a + 0 > t + 0) c++ } END { print c + 0 }' "$tmp/requests.jsonl")
  again=$((again + n))
done < <(grep -o '"id":"t[0-9]*"' finished-1.jsonl | cut -d'"' -f4)
requests=$(wc -l < "$tmp/requests.jsonl")
if [ "$again" != 0 ]; then
  echo "$again requests of tasks finished before the scancel were sent again" >&2
  exit 1
fi
echo "ok slurm-test: 200 tasks over 4 shards, shard 1 stopped at $finished results and resubmitted; every task answered once, $requests requests, none again for a finished task"
