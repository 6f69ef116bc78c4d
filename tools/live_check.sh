#!/usr/bin/env bash
# Live check: run a sample of recorded cases on the newest transformers (torch 2.13.0 CPU) and compare
# them with the engine. A new release that changes a rule turns this red.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${TRAINSTEPS_LIVE_VENV:-/tmp/trainsteps-live}"
OUT="${TRAINSTEPS_LIVE_DIR:-/tmp/trainsteps-live-runs}"
CASES="n1047_b10_g8_e3,n17_b8_g4_e3,n1000_b7_g3_e2_resume30,stream_n28_b4_g2_ms20,n1047_b10_g8_ms50_eval0.13_save7,n1047_b10_g8_e3_w2"
if ! "$VENV/bin/python" -c "import torch, transformers, accelerate" 2>/dev/null; then
  python3 -m venv "$VENV"
fi
# The torch pin keeps the resolver on the local CPU build; transformers and accelerate float to the newest.
"$VENV/bin/pip" install -q --upgrade "torch==2.13.0" transformers accelerate > /tmp/trainsteps-live-pip.log 2>&1 || { tail -20 /tmp/trainsteps-live-pip.log; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
python3 tools/record_hf.py --python "$VENV/bin/python" --out "$OUT" --cases "$CASES"
TRAINSTEPS_LIVE_DIR="$OUT" .venv/bin/pytest -q -m live tests/test_hf_live.py
