"""Reading training logs: one parser per format, then inference (`infer`) and the explanation (`explain`).

    >>> from trainsteps.logs import read_log
    >>> runs = read_log(text="Num examples = 1,047\\nTotal optimization steps = 3,900").runs
    >>> runs[0].value("num_examples"), runs[0].value("max_steps")
    (1047, 3900)
"""

from trainsteps.logs.observed import LogObservations, Reading, RunObservation
from trainsteps.logs.reader import read_bytes, read_log

__all__ = ["read_log", "read_bytes", "LogObservations", "RunObservation", "Reading"]
