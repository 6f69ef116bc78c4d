#!/usr/bin/env bash
# Create a virtualenv for the live tests (tests marked `live`): CPU torch, the newest transformers,
# accelerate and lightning, and this project installed editable.
#
#   bash tools/setup_live_env.sh            # -> .venv-live
#   bash tools/setup_live_env.sh /tmp/venv  # any directory
#   TRANSFORMERS=4.49.0 bash tools/setup_live_env.sh /tmp/venv-449   # an older release
#   WITH_TRL=1 bash tools/setup_live_env.sh                          # also trl + datasets (tests/live/test_trl_live.py)
#
# Then: /tmp/venv/bin/pytest -m live
# Everything goes on ONE pip line pinned against torch==2.13.0 so that no other torch (and no CUDA) is pulled in.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$here/.venv-live}"
python="${PYTHON:-python3}"
transformers_req="transformers"
if [ -n "${TRANSFORMERS:-}" ]; then transformers_req="transformers==${TRANSFORMERS}"; fi
accelerate_req="${ACCELERATE:+accelerate==${ACCELERATE}}"
accelerate_req="${accelerate_req:-accelerate}"
"$python" -m venv "$dir"
"$dir/bin/pip" install -q --upgrade pip
extra=()
if [ "${WITH_TRL:-0}" = "1" ]; then extra=(trl datasets); fi
"$dir/bin/pip" install -q "torch==2.13.0" "$transformers_req" "$accelerate_req" lightning "${extra[@]}" -e "$here[test]"
"$dir/bin/python" -c "import torch, transformers, accelerate, lightning; print('torch', torch.__version__, '| transformers', transformers.__version__, '| accelerate', accelerate.__version__, '| lightning', lightning.__version__)"
