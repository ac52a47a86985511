#!/usr/bin/env bash
# Runs GenericAgent's one-shot task mode on a copy of the user's checkout and stops it when the round ends (it
# would otherwise wait ten minutes for a follow-up). Arguments: CHECKOUT WORKDIR INSTRUCTION.
set -eu
checkout=$1 workdir=$2 instruction=$3
copy="$HOME/GenericAgent"
mkdir -p "$copy"
cp -rn "$checkout/." "$copy/"   # -n: keep the mykey.py the harness wrote
cd "$copy"
rm -f temp/bench/output*.txt
python3 agentmain.py --task bench --input "$instruction

Work in the folder $workdir: read and write the task's files there." &
agent=$!
until grep -qs 'ROUND END' temp/bench/output.txt; do
  kill -0 "$agent" 2>/dev/null || { wait "$agent"; exit $?; }
  sleep 2
done
kill "$agent" 2>/dev/null || true
