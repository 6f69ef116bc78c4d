"""Provenance: every derived number with its formula, the values put in, and the rounding rule.

A `Derivation` is an ordered list of `Step`s. The same object feeds the human
report (`--explain`), the JSON output and the web page; only `render` knows about
languages, and it asks the i18n catalogs for the words.
"""

from __future__ import annotations

from trainsteps.record import field, record


@record
class Step:
    """One derived quantity."""

    key: str
    """Name of the quantity, as used in the JSON output (e.g. `num_update_steps_per_epoch`)."""
    value: object
    """The result."""
    formula: str = ""
    """The rule in symbols, e.g. `ceil(L / GA)`; empty for a value that was given."""
    substituted: str = ""
    """The same rule with the numbers put in, e.g. `ceil(105 / 8)`."""
    why: str | None = None
    """Message id of the reason (which release does what, which rounding); see `trainsteps.i18n`."""
    params: dict = field(default_factory=dict)
    """Parameters of the `why` message."""

    def to_dict(self, lang: str = "en") -> dict:
        words = _words(self, lang)  # looked up once for the fields and the text
        return {"key": self.key, "name": words[0], "value": self.value, "formula": words[1], "substituted": words[2],
                "why": words[3], "text": _text(self, lang, *words)}


def render_step(step: Step, lang: str = "en") -> str:
    """`steps per epoch = ceil(105 / 8) = 14: transformers >= 4.52 rounds up`."""
    return _text(step, lang, *_words(step, lang))


def _words(step: Step, lang: str) -> tuple[str, str, str, str | None]:
    """(name, formula, substituted, why) in the reader's language."""
    from trainsteps.i18n import message, quantity_name

    why = message(step.why, lang, **step.params) if step.why else None
    return quantity_name(step.key, lang), _formula(step, lang), _substituted(step, lang), why


def _text(step: Step, lang: str, name: str, formula: str, substituted: str, why: str | None) -> str:
    parts = [name]
    if formula and formula != substituted:
        parts.append(formula)
    if substituted and substituted not in (str(step.value), format_value(step.value)):
        parts.append(substituted)
    parts.append(format_value(step.value))
    text = " = ".join(parts)
    if step.why:
        text += ("：" if lang == "zh" else ": ") + why
    return text


def _formula(step: Step, lang: str) -> str:
    """The rule, or for a number taken from a source (a launcher line, a model card) the source's name, in the
    reader's language: a formula that is a label id (`explain.source.launcher`) is looked up."""
    if step.formula.startswith("explain.source."):
        from trainsteps.i18n import label

        return label(step.formula, lang)
    return step.formula


def _substituted(step: Step, lang: str) -> str:
    """The numbers put in; for a number read from a line, where it was read (`run.slurm line 10`, `run.slurm 第 10 行`)."""
    if "at_line" in step.params and not step.substituted:
        from trainsteps.i18n import message

        where = message("explain.at_line", lang, line=step.params["at_line"])
        return f"{step.params['at_file']} {where}" if step.params.get("at_file") else where
    return step.substituted


def format_epochs(value: float | None) -> str:
    """Epochs as every report prints them: six significant digits below 1,000 (`278.61`, `3.00476`), grouped above
    (`128,770`, `1,000,000`, `1,234.57`), never an exponent; `?` when unknown."""
    if value is None:
        return "?"
    if abs(value) >= 1000:
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{value:g}"


def format_value(value: object) -> str:
    """A number as the reports print it: `1,047`, `278.6095`, `3`."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4f}".rstrip("0").rstrip(".")
    return str(value)


class Derivation:
    """An ordered record of how each number was reached; later steps may use earlier ones.

    Recording is cheap, because a plan records a dozen steps and `explain` plans hundreds of candidates: `add`
    keeps its arguments as they are, and the `Step`s (and any substituted text given as a template and its
    values) are built only when the derivation is read.
    """

    __slots__ = ("_raw", "_read")

    def __init__(self) -> None:
        self._raw: list[tuple] = []
        self._read: tuple | None = None
        """(language, steps recorded, [(step, its words, its text)]): the steps as last read, which the JSON and the
        report of one plan both read (kept until a step is added)."""

    def add(self, key: str, value: object, formula: str = "", substituted: str | tuple = "", why: str | None = None,
            **params) -> object:
        """Record a step and return its value, so arithmetic reads as one line. `substituted` is the text, or a
        `(template, value, ...)` tuple formatted with `str.format` when the step is read."""
        self._raw.append((key, value, formula, substituted, why, params))
        self._read = None
        return value

    def given(self, key: str, value: object, why: str | None = None, **params) -> object:
        """Record an input as the user set it (or its default)."""
        self._raw.append((key, value, "", "", why, params))
        self._read = None
        return value

    @property
    def steps(self) -> list[Step]:
        return [_step(raw) for raw in self._raw]

    @steps.setter
    def steps(self, steps: list[Step]) -> None:
        self._raw = [(s.key, s.value, s.formula, s.substituted, s.why, s.params) for s in steps]
        self._read = None

    def __getitem__(self, key: str) -> Step:
        for raw in reversed(self._raw):
            if raw[0] == key:
                return _step(raw)
        raise KeyError(key)

    def __contains__(self, key: str) -> bool:
        return any(raw[0] == key for raw in self._raw)

    def __iter__(self):
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self._raw)

    def to_list(self, lang: str = "en") -> list[dict]:
        return [{"key": step.key, "name": words[0], "value": step.value, "formula": words[1], "substituted": words[2],
                 "why": words[3], "text": text} for step, words, text in self._rendered(lang)]

    def render(self, lang: str = "en") -> list[str]:
        return [text for _, _, text in self._rendered(lang)]

    def _rendered(self, lang: str) -> list[tuple]:
        read = self._read
        if read is None or read[0] != lang or read[1] != len(self._raw):
            rendered = []
            for step in self.steps:
                words = _words(step, lang)
                rendered.append((step, words, _text(step, lang, *words)))
            read = self._read = (lang, len(self._raw), rendered)
        return read[2]


def _step(raw: tuple) -> Step:
    key, value, formula, substituted, why, params = raw
    if substituted.__class__ is tuple:
        substituted = substituted[0].format(*substituted[1:])
    return Step(key, value, formula, substituted, why, params)
