"""Errors the user can fix. Each carries a message id for i18n and a hint."""

from __future__ import annotations


class TrainstepsError(Exception):
    """Bad input or an impossible request: shown as one line plus a hint, exit code 2.

    `message` and `hint` are already-rendered English; `msg_id` and `params` let the
    i18n layer render them in another language.
    """

    origin: str | None = None
    """Where the bad value was written (`config.yaml:7`), when it came from a file; shown before the message."""

    def __init__(self, msg_id: str, hint_id: str | None = None, **params):
        self.msg_id = msg_id
        self.hint_id = hint_id
        self.params = params
        from trainsteps.i18n import message

        super().__init__(message(msg_id, "en", **params))

    def render(self, lang: str = "en") -> tuple[str, str | None]:
        from trainsteps.i18n import message

        hint = message(self.hint_id, lang, **self.params) if self.hint_id else None
        text = message(self.msg_id, lang, **self.params)
        return (f"{self.origin}: {text}" if self.origin else text), hint


class InputError(TrainstepsError):
    """A setting is missing, out of range or contradicts another."""
