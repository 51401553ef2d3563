#!/bin/bash
# Recall latency of two versions of tempr, alternating on one stack (same PostgreSQL, Redis, banks):
#   git worktree add /tmp/tempr-before <commit>; [ROUNDS=2] bench/ab/recall_ab.sh /tmp/tempr-before [N]
# Each round starts that version's `tempr services up` (its own worker layout) and gateway, asks N
# LoCoMo questions through HTTP as misses, then as hits (bench/ab/probe.py), and stops them.
# Needs the LoCoMo banks in the database and $CONV/questions.jsonl (../shared/bench/peer/locomo_convert.py).
set -euo pipefail
BEFORE=${1:?usage: recall_ab.sh BEFORE_TREE [N]}
N=${2:-80}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export TEMPR_STATE_DIR=${TEMPR_STATE_DIR:-$HERE/.tempr} TEMPR_AUTH=off CONV=${CONV:-/tmp/conv}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for code in before after; do
    if [ $code = before ]; then ROOT=$BEFORE; else ROOT=$HERE; fi
    # cwd and PYTHONPATH both: `python -m celery` puts the cwd first on sys.path
    export PYTHONPATH=$ROOT; cd "$ROOT"
    "$HERE/.venv/bin/tempr" services up > /dev/null 2>&1
    "$HERE/.venv/bin/tempr" api --port 18766 > /dev/null 2>&1 &
    API=$!
    for _ in $(seq 1 40); do curl -s http://127.0.0.1:18766/healthz > /dev/null && break; sleep 0.5; done
    "$HERE/.venv/bin/python" "$HERE/bench/ab/probe.py" http://127.0.0.1:18766 "$N" "$code#$round load=$(cut -d' ' -f1 /proc/loadavg)"
    kill $API; wait $API 2> /dev/null || true
    "$HERE/.venv/bin/tempr" services down > /dev/null 2>&1
  done
done
