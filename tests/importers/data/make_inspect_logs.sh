#!/bin/sh
# Recorded Inspect AI logs for tests/importers: the suite's venv cannot install inspect-ai
# (its botocore dependency needs python-dateutil<3; constraints.txt pins 4.0.0), so these
# are made once with the bench's Inspect venv and committed. Re-run from the repo root:
#   sh tests/importers/data/make_inspect_logs.sh
set -eu
here=tests/importers/data
inspect=bench/.venv-inspect/bin/inspect
out=$(mktemp -d)
for v in a b; do
  "$inspect" eval "$here/pairing_task.py@pairing" -T variant=$v --model mockllm/model \
    --epochs 2 --no-fail-on-error --log-dir "$out/$v" --no-log-realtime --display none
done
"$inspect" eval "$here/pairing_task.py@pairing" -T variant=a --model mockllm/model \
  --epochs 2 --log-format json --log-dir "$out/json" --display none
"$inspect" eval "$here/pairing_task.py@pairing" -T variant=a -T n=15 --model mockllm/model \
  --epochs 2 --log-dir "$out/short" --display none
cp "$out"/a/*.eval "$here/inspect_a.eval"
cp "$out"/b/*.eval "$here/inspect_b.eval"
cp "$out"/json/*.json "$here/inspect_a2.json"
cp "$out"/short/*.eval "$here/inspect_short.eval"
rm -rf "$out"
