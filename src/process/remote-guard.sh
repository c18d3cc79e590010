#!/usr/bin/env bash
# quiesce remote guard: the deadline guard's counterpart on a host reached over ssh (or any
# command that runs a command elsewhere: `wave run --via 'ssh {host}'`).
#
#   bash -c SCRIPT quiesce-remote-guard run KEY DEADLINE_MS GRACE_MS COMMAND
#   bash -c SCRIPT quiesce-remote-guard check KEY COMMAND
#
# run: starts COMMAND (with `bash -c`) in a session of its own on this host, remembers it under
# KEY in $QUIESCE_GUARD_DIR (default /tmp/quiesce-guard), and ends it (TERM, then KILL after
# GRACE_MS) when its deadline passes. The agent moves the deadline with `arm MS` lines on our
# standard input after every renewal of the host's lease; when the session dies (the agent's
# host is partitioned, the agent was killed), no line comes and the last deadline stands. So a
# command started for an agent that lost its lease ends here, on the target, by that lease's
# deadline: no takeover after `--remote-grace` can overlap it. Exits with the command's code,
# or 143 when it had to be stopped. A second `run` for a KEY whose command still runs is
# refused (exit 75): nothing is ever started twice at once.
#
# check: answers 3, "in progress", while the command guarded under KEY still runs (a lookup
# must never call a running patch "not patched"), else runs COMMAND and exits with its code.
#
# Time comes from /proc/uptime (monotonic, counts a suspend); the guard wakes at least every
# 100 ms. It needs bash and /proc on the target.
set -u
trap '' PIPE HUP INT
mode=$1 key=$2
dir=${QUIESCE_GUARD_DIR:-/tmp/quiesce-guard}
mkdir -p "$dir" 2>/dev/null && chmod 700 "$dir" 2>/dev/null
name=${key//[^A-Za-z0-9._-]/_}
state=$dir/$name
now_ms() { local u; read -r u _ </proc/uptime; u=${u/./}; now=$((10#$u * 10)); }
pause() { local t; printf -v t '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); sleep "$t"; }
start_of() { # $1 pid -> $start (field 22) and $pstate (field 3); fails when gone
  local st rest f
  read -r st 2>/dev/null <"/proc/$1/stat" || return 1
  rest=${st##*) }
  read -r -a f <<<"$rest"
  pstate=${f[0]} start=${f[19]}
}
running() { # the command recorded under KEY still runs: $pid set
  local rec_start
  read -r pid rec_start 2>/dev/null <"$state" || return 1
  start_of "$pid" || return 1
  [[ $start == "$rec_start" && $pstate != Z ]]
}
if [[ $mode == check ]]; then
  if running; then
    echo "quiesce: the command for $key is still in progress on $(hostname) (pid $pid)" >&2
    exit 3
  fi
  exec bash -c "$3"
fi
grace=$4 cmd=$5
if running; then
  echo "quiesce: the command for $key still runs on $(hostname) (pid $pid); not starting it again" >&2
  exit 75
fi
setsid bash -c "$cmd" </dev/null &
pid=$!
start_of "$pid" && echo "$pid $start" >"$state"
now_ms
deadline=$((now + $3))
eof=0
finish() { wait "$pid"; local rc=$?; rm -f "$state"; exit "$rc"; }
while :; do
  if ! start_of "$pid" || [[ $pstate == Z ]]; then finish; fi
  now_ms
  left=$((deadline - now))
  if ((left <= 0)); then
    echo "quiesce: the lease's deadline passed; stopping the command for $key on $(hostname)" >&2
    kill -TERM -- "-$pid" 2>/dev/null
    now_ms
    until=$((now + grace))
    # The command gets its grace; once it has exited (or the grace is over) what is left of its
    # group is killed: nothing it started outlives the lease either.
    while start_of "$pid" && [[ $pstate != Z ]]; do
      now_ms
      ((now >= until)) && break
      pause 20
    done
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "$state"
    exit 143
  fi
  slice=$((left < 100 ? left : 100))
  if ((eof)); then pause "$slice"; continue; fi
  printf -v t '%d.%03d' $((slice / 1000)) $((slice % 1000))
  if read -r -t "$t" line; then
    case $line in "arm "*) now_ms; deadline=$((now + ${line#arm })) ;; esac
  elif (($? <= 128)); then
    eof=1
  fi
done
