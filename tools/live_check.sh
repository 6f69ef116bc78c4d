#!/usr/bin/env bash
# Live check, run by CI after the unit tests:
#  1. record a sample of cases on the newest transformers (torch 2.13.0 CPU) and compare them with the engine,
#     so a release that changes a rule turns CI red;
#  2. run the tests marked `live`: the HF and Lightning callbacks inside real training (1 and 2 ranks).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${TRAINSTEPS_LIVE_VENV:-/tmp/trainsteps-live}"
OUT="${TRAINSTEPS_LIVE_DIR:-/tmp/trainsteps-live-runs}"
LOG=/tmp/trainsteps-live-setup.log
CASES="n1047_b10_g8_e3,n17_b8_g4_e3,n1000_b7_g3_e2_resume30,stream_n28_b4_g2_ms20,n1047_b10_g8_ms50_eval0.13_save7,n1047_b10_g8_e3_w2"
if "$VENV/bin/python" -c "import torch, transformers, accelerate, lightning, trl, trainsteps" 2>/dev/null; then
  # Keep the environment, but move the frameworks to their newest releases (torch stays pinned).
  "$VENV/bin/pip" install -q --upgrade "torch==2.13.0" transformers accelerate trl -e . > "$LOG" 2>&1 || { tail -20 "$LOG"; exit 1; }
else
  WITH_TRL=1 bash tools/setup_live_env.sh "$VENV" > "$LOG" 2>&1 || { tail -20 "$LOG"; exit 1; }
fi
"$VENV/bin/python" -c "import transformers; print('live check on transformers', transformers.__version__)"
rm -rf "$OUT" && mkdir -p "$OUT"
python3 tools/record_hf.py --python "$VENV/bin/python" --out "$OUT" --cases "$CASES"
TRAINSTEPS_LIVE_DIR="$OUT" "$VENV/bin/pytest" -m live tests/test_hf_live.py tests/live
