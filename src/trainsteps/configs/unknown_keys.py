"""Keys of a training config that its framework does not have: a did-you-mean, and what the framework itself does.

LLaMA-Factory (`hparams/parser.py::_parse_args`, `allow_extra_keys` False unless ALLOW_EXTRA_ARGS=1) and every
`HfArgumentParser.parse_dict / parse_yaml_file / parse_json_file` caller refuse a key no dataclass field has, with
`ValueError: Some keys are not used by the HfArgumentParser: [...]`: the real launch stops before training. TRL's
`TrlParser` turns config keys it cannot place into command-line arguments and stops on them the same way. The plan
itself leaves such a key out, so a typo such as `gradient_acumulation_steps` would otherwise plan the default.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

REFUSES = {"llamafactory": "unknown.reaction.llamafactory", "hf": "unknown.reaction.hf", "trl": "unknown.reaction.trl"}
"""Frameworks whose launch stops on an unknown key, and the message saying so; the others are not stated."""


@dataclass(frozen=True)
class UnknownKey:
    key: str
    """The key as written."""
    origin: str
    """file:line"""
    suggestion: str | None
    """The closest key the framework has, if one is close (difflib ratio >= 0.8)."""
    reaction: str
    """Message id of what the framework does with the key."""

    def to_dict(self, lang: str, framework: str) -> dict:

        return {"key": self.key, "from": self.origin, "did_you_mean": self.suggestion, "launch_stops": framework in REFUSES,
                "message": self.message(lang, framework)}

    def message(self, lang: str, framework: str) -> str:
        from trainsteps.i18n import message

        mean = message("unknown.did_you_mean", lang, key=self.suggestion) if self.suggestion else ""
        return message("unknown.key", lang, key=self.key, origin=self.origin, framework=_display(framework), did_you_mean=mean,
                       reaction=message(self.reaction, lang))


def known_keys(framework: str) -> frozenset:
    from trainsteps.configs import axolotl, llamafactory, swift, trl
    from trainsteps.configs.known_keys import LLAMAFACTORY, TRAINING_ARGUMENTS

    extra = {"llamafactory": set(LLAMAFACTORY) | set(llamafactory.DATA_KEYS) | {"do_train", "do_eval", "do_predict"},
             "trl": set(trl.KNOWN) | set(trl.RULE_KEYS), "swift": set(swift.KNOWN) | set(swift.RULE_KEYS),
             "axolotl": set(axolotl._KNOWN) | set(axolotl._RULE_KEYS)}.get(framework, set())
    return frozenset(TRAINING_ARGUMENTS) | frozenset(extra)


def find(imported) -> list[UnknownKey]:
    """The ignored keys that come from the main config file (not DeepSpeed/accelerate files or a missing file)."""
    main = next((f.rsplit(" (", 1)[0] for f in imported.files if not f.endswith(("(deepspeed)", "(accelerate)", "(trainer_state)"))), None)
    if main is None:
        return []
    import pathlib

    main_name = pathlib.Path(main).name
    candidates = sorted(known_keys(imported.framework))
    reaction = REFUSES.get(imported.framework, "unknown.reaction.other")
    out = []
    for key, origin in imported.settings.ignored:
        if origin.split(":")[0] != main_name or "(file not found)" in origin:
            continue
        close = difflib.get_close_matches(str(key), candidates, n=1, cutoff=0.8)
        out.append(UnknownKey(str(key), origin, close[0] if close else None, reaction))
    return out


def _display(framework: str) -> str:
    return {"llamafactory": "LLaMA-Factory", "hf": "TrainingArguments", "trl": "TRL", "swift": "ms-swift", "axolotl": "Axolotl"}.get(framework, framework)
