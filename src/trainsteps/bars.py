"""The grammar of progress bars, in one place: tqdm's terminal draw and the notebook widget's text, as the log reader
(logs/progress.py, logs/hf.py) and the rate reader (timing/log_rates.py) read them.

     39%|███▉      | 1520/3900 [1:23:45<2:11:10,  3.30s/it]        tqdm: position/total [elapsed<left, rate unit]
    Train:  12%|█▏  | 2900/25120 [2:12:23<16:39:43,  2.70s/it]     any description before it
    [ 3230/10000 2:20:47 < 4:55:16, 0.38 it/s, Epoch 11.26/13]     transformers' notebook widget as text

Every pattern is built from the same pieces. Which bar is the training loop's (its description, its total, how
often it is drawn) is decided by the log reader (logs/progress.py `training_bar`), not here.
"""

from __future__ import annotations

from trainsteps.patterns import lazy

COUNT = r"\d{1,15}"
"""A position or total: at most 15 digits (no run reaches 1e15 steps; a longer number is no bar)."""
CLOCK = r"(?:\d+\s+days?,\s*)?\d+(?::\d{1,2}){1,2}"
"""tqdm's clock: `05:12`, `4:15:03`, `1 day, 2:03:04`."""
NUMBER = r"[0-9]+(?:\.[0-9]+)?(?![0-9.])"
"""A whole rate: `3.30`, never `1.2.3`."""
UNIT = r"(s/it|it/s)"

POSITION = r"(?<![\d/.])(" + COUNT + r")/(" + COUNT + r")"
"""`1520/3900` not inside a longer number, a path or a fraction."""

TQDM = lazy(POSITION + r"\s?\[([^\]<]*)<([^\],]*)(?:,\s*(\d+(?:\.\d*)?|\.\d+)\s*" + UNIT + ")?")
"""Any tqdm draw, read leniently: groups position, total, elapsed text, left text, rate (optional), unit. The clocks
are texts: `seconds()` of the reader makes them numbers or None."""

TQDM_TIMED = lazy(r"(?<![\d/])(\d+)/(\d+)\s*\[(" + CLOCK + r")<(" + CLOCK + r"|\?),\s*(\?|" + NUMBER + r")\s*" + UNIT)
"""A draw whose clocks and rate are all whole (the rate reader's samples): position, total, elapsed, left (`?`
before the first step), rate (`?` too), unit."""

NOTEBOOK = lazy(r"\[\s*(" + COUNT + r")/(" + COUNT + r")\s+([\d:]+)\s*<\s*([\d:]+|\?)?\s*,\s*(\d+(?:\.\d*)?|\.\d+)\s*(it/s|s/it)"
                      r"(?:,\s*Epoch\s+(\d{1,15}(?:\.\d*)?)/(\d+))?")
"""The notebook widget's text: position, total, elapsed, left, rate, unit, and the epoch and epochs when shown."""

NOTEBOOK_TIMED = lazy(r"\[\s*(\d+)/(\d+)\s+(" + CLOCK + r")\s*<\s*(" + CLOCK + r"),\s*(" + NUMBER + r")\s*it/s")
"""The widget's text with whole clocks (the widget always writes it/s)."""

NOTEBOOK_EPOCH = lazy(r"\[\s*(\d+)/(\d+)\b[^\]]*?Epoch\s+([0-9.]+)/(\d+)\s*\]")
"""The widget's position and its `Epoch e/E`, whatever comes between them."""
