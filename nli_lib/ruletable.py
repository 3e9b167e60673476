"""Rule tables: an ordered registry of small named rules, each with a one-line reason.

Rule code (FTC's counterfactual checks, the atoms chunker and realiser, the QUD templates, FactNLI's definition
sentences) is a list of cases tried in order. Written as one long function, the cases and their order are hard to
see and to change; as a `RuleTable`, each case is a small function registered under a name with the reason it
exists, the order is the registration order, and the table a docstring shows is `RuleTable.table()` (a doctest,
so it cannot drift from the code).

>>> SIZES = RuleTable("size")
>>> @SIZES.rule("tiny", "under ten")
... def _tiny(n):
...     return "tiny" if n < 10 else None
>>> @SIZES.rule("large", "a hundred or more")
... def _large(n):
...     return "large" if n >= 100 else None
>>> print(SIZES.table())
tiny   under ten
large  a hundred or more
>>> SIZES.first(5), SIZES.first(500), SIZES.first(50)
('tiny', 'large', None)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence


@dataclass(frozen=True)
class Rule:
    """One registered rule: its name, why it exists (one line) and the function that applies it."""

    name: str
    why: str
    apply: Callable


class RuleTable:
    """Rules in registration order. `names`: the only names a rule may take (a rule table whose names are
    reported elsewhere, such as FTC's `CHECKS`); None allows any name, each once."""

    def __init__(self, what: str, names: Sequence[str] | None = None):
        self.what = what
        self.names = None if names is None else tuple(names)
        self._rules: list[Rule] = []

    def rule(self, name: str, why: str) -> Callable[[Callable], Callable]:
        """Register the decorated function as the next rule, `name`, for the reason `why` (one line)."""
        if not why or "\n" in why:
            raise ValueError(f"{self.what} rule {name!r}: the reason must be one line")
        if self.names is not None and name not in self.names:
            raise ValueError(f"{self.what} rule {name!r} is not one of {self.names}")
        if self.names is None and name in {r.name for r in self._rules}:
            raise ValueError(f"{self.what} rule {name!r} is registered twice")

        def register(apply: Callable) -> Callable:
            self._rules.append(Rule(name, why, apply))
            return apply

        return register

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def first(self, *args, **kwargs):
        """The first rule's answer that is not None (None when no rule answers)."""
        for r in self._rules:
            answer = r.apply(*args, **kwargs)
            if answer is not None:
                return answer
        return None

    def table(self) -> str:
        """The rules in order, a line each: name and reason."""
        width = max((len(r.name) for r in self._rules), default=0)
        return "\n".join(f"{r.name:<{width}}  {r.why}".rstrip() for r in self._rules)
