"""An input error that also carries the framework's own error text, verbatim."""

from __future__ import annotations

from trainsteps.errors import InputError


class FrameworkRuleError(InputError):
    """The framework would stop on these settings; `framework_error` is exactly what it would print."""

    def __init__(self, msg_id: str, hint_id: str | None = None, *, framework_error: str, **params):
        super().__init__(msg_id, hint_id, framework_error=framework_error, **params)
        self.framework_error = framework_error
