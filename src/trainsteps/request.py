"""`PlanRequest`: one `trainsteps plan` request, whichever surface built it (the command line, the web page, the
Python API). The planners (`trainsteps.planners`) read settings from here and nowhere else: no click context, no
side channel. Each setting keeps the command line's parameter name (`num_examples`, `gpus`, `step_time`, ...).
"""

from __future__ import annotations

from trainsteps.record import field, record


@record
class PlanRequest:
    """What the user asked: the settings by name, which of them were given, and how to answer."""

    settings: dict = field(default_factory=dict)
    """Every setting by parameter name, with the command line's default for those not given."""
    given: frozenset = frozenset()
    """Names of the settings the user gave (typed, in the environment, or in the web page's query). Only these can be
    refused: a default is never an instruction."""
    configs: tuple = ()
    """Config files, in the order given (`plan CONFIG...`)."""
    launch: str | None = None
    """A launch command line (`torchrun ...`, `llamafactory-cli train x.yaml`, `python3 -m verl.trainer.main_ppo ...`)."""
    framework: str = "hf"
    """`--framework`: hf (the Trainer and its wrappers), a pretraining stack or an RL trainer."""
    fmt: str = "human"
    """Output: human text or JSON."""
    lang: str = "en"
    """Language of every message: en or zh."""
    explain: bool = False
    """Show every number's derivation."""

    def get(self, name: str, default=None):
        """A setting's value (its default when not given)."""
        value = self.settings.get(name, default)
        return default if value is None else value

    def gave(self, name: str) -> bool:
        """Whether the user gave this setting (a default does not count)."""
        return name in self.given
