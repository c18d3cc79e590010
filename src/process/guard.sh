#!/usr/bin/env bash
# quiesce deadline guard: bash guard.sh PGID LEADER_START GRACE_MS DEADLINE_MS
#
# LEADER_START `-`: read the leader's start time from /proc now (the guard was started by the
# leader itself, which is alive). DEADLINE_MS `-`: not armed yet; nothing fires until the first
# `arm`, and end of input before it (the holder died before the command could start) ends the
# guard.
#
# The deadline guard: a small bash program that terminates a command's process group when the
# lease it runs under reaches its local deadline, whatever happens to the quiesce process that
# holds the lease (stopped, frozen, starved, SIGKILLed). It runs as a process of its own, in a
# process group of its own, so that neither a signal to the holder nor one to the command
# reaches it.
#
# Protocol, one line each way:
#   holder -> guard   `arm MS`  the deadline is MS from now (sent after every renewal)
#                     `fire`    stop the command now (the holder decided: lease lost, forced)
#                     `query`   answer `armed` (asked once the command has exited)
#                     `done`    the command is over; exit without touching anything
#   guard -> holder   `ready PID`, `armed`, `fired ended|running`, `killed`, `gone`
#
# Time is read from /proc/uptime: monotonic and, unlike the clock node's timers use, it keeps
# counting while the machine is suspended. The guard wakes at least every 100 ms to read it,
# so a resume from suspend past the deadline is acted on within 100 ms.
#
# End of input (the holder died) keeps the last deadline: the command may finish what it is
# doing until then (the lease is still its own), and is terminated when it passes.
#
# `fired ended` means the group's leader (the command) had already exited when the deadline
# passed (it is gone, or a zombie its stopped holder has not reaped): the command ended before
# the lease was lost, and its exit code is its own. The group is still signalled: what the
# command left behind must not outlive the lease either.
#
# If a process now has the leader's pid but another start time, the whole group is gone (Linux
# frees a pid only when no process uses it as pid or group id) and nothing is signalled.
set -u
trap '' PIPE INT HUP QUIT TSTP
pgid=$1 start=$2 grace=$3
say() { printf '%s\n' "$*" 2>/dev/null; }
now_ms() { local u; read -r u _ </proc/uptime; u=${u/./}; now=$((10#$u * 10)); }
# sleep gets none of our pipes: the holder learns of this guard's death when they close.
pause() { local t; printf -v t '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); sleep "$t" </dev/null >/dev/null; }
# The group leader's /proc/PID/stat fields after its name into f ([0] state, [19] start time);
# fails when it is gone. The name may hold spaces and parentheses: the fields follow the last ")".
# Split by the shell's own word splitting, with pathname expansion off for it (the fields are
# numbers and one letter; nothing else here turns it on or off, and `local -` would need bash
# 4.4 on the hosts a wave reaches), not by `read -a <<<`: a here-string is a pipe, which bash
# reads one byte per system call, some 300 for one stat line, at every guard's start.
leader_stat() {
  local st
  read -r st 2>/dev/null </proc/$pgid/stat || return 1
  set -f
  f=(${st##*) })
  set +f
}
fire() {
  local state=running f
  if leader_stat; then
    if [[ -n $start && ${f[19]} != "$start" ]]; then say gone; exit 0; fi
    [[ ${f[0]} == Z ]] && state=ended
  else
    state=ended
  fi
  say "fired $state"
  kill -TERM -- "-$pgid" 2>/dev/null || { say gone; exit 0; }
  now_ms
  local until=$((now + grace))
  while kill -0 -- "-$pgid" 2>/dev/null; do
    now_ms
    if ((now >= until)); then
      kill -KILL -- "-$pgid" 2>/dev/null
      say killed
      exit 0
    fi
    pause 20
  done
  say gone
  exit 0
}
if [[ $start == - ]]; then
  leader_stat || { say gone; exit 0; }
  start=${f[19]}
fi
say "ready $$"
if [[ $4 == - ]]; then
  # Not armed: wait for the first line; the command cannot start before the holder sends it.
  while :; do
    read -r line || exit 0
    case $line in
      "arm "*) now_ms; deadline=$((now + ${line#arm })); break;;
      fire) fire;;
      query) say armed;;
      done) exit 0;;
    esac
  done
else
  now_ms
  deadline=$((now + $4))
fi
eof=0
while :; do
  now_ms
  left=$((deadline - now))
  ((left > 0)) || fire
  slice=$((left < 100 ? left : 100))
  if ((eof)); then pause "$slice"; continue; fi
  printf -v t '%d.%03d' $((slice / 1000)) $((slice % 1000))
  if read -r -t "$t" line; then
    case $line in
      "arm "*) now_ms; deadline=$((now + ${line#arm }));;
      fire) fire;;
      query) say armed;;
      done) exit 0;;
    esac
  elif (($? <= 128)); then
    eof=1
  fi
done
