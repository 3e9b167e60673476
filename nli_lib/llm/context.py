"""Prompts for base LMs and the context window: `completion_prompt`, `TokenBudget`, `fit_shots`.

A base LM (GPT-Neo, GPT2-XL) has no roles and no chat template: it continues a text. `completion_prompt` is
the one rule that turns chat messages into that text (the user and assistant turns, blank-line separated; a
system message is a chat instruction and is not sent). Every completion — in-process `generate` or an
endpoint's ``/v1/completions`` — sends exactly this text, and the call cache keys on it.

A few-shot prompt can be longer than the model's context (FTC's 20-shot prompts take ~500–1,050 GPT-2 tokens;
GPT2-XL reads 1,024). `fit_shots` drops priming examples from the end (the paper's printed rows come first
and are dropped last) until the prompt plus the completion's `max_new_tokens` fit, counting tokens with the
model's own tokenizer, and says how many examples it kept; a prompt that does not fit even with none is a
`PromptTooLong`.

>>> completion_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q: 2+2?\\nA:"}])
'Q: 2+2?\\nA:'
>>> budget = TokenBudget(context_tokens=12, max_new_tokens=4, count=lambda m: len(completion_prompt(m).split()))
>>> shots = [{"q": "a b"}, {"q": "c d"}, {"q": "e f"}]
>>> render = lambda rows: [{"role": "user", "content": " ".join(r["q"] for r in rows) + " query now"}]
>>> messages, used = fit_shots(render, shots, budget)     # 2 + 2*k words + 4 new tokens <= 12: k = 3
>>> used, budget.prompt_limit
(3, 8)
>>> fit_shots(render, shots, TokenBudget(9, 4, budget.count))[1]   # 2 + 2*k <= 5: one shot kept
1
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

Messages = list[dict]


def as_messages(messages: Messages | str) -> Messages:
    """Chat messages from a plain prompt (one user turn) or a copy of a message list.

    >>> as_messages("Hi")
    [{'role': 'user', 'content': 'Hi'}]
    """
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(m) for m in messages]


def completion_prompt(messages: Messages | str) -> str:
    """The text a base LM continues: user/assistant contents joined by a blank line, system messages left out."""
    if isinstance(messages, str):
        return messages
    turns = [str(m.get("content") or "") for m in messages if m.get("role") != "system"]
    return "\n\n".join(turns)


class PromptTooLong(ValueError):
    """A prompt that does not fit the model's context even with no priming examples."""


@dataclass(frozen=True)
class TokenBudget:
    """How many tokens a prompt may take: the context window less the tokens the completion may add."""

    context_tokens: int  # the model's context window (GPT2-XL: 1,024)
    max_new_tokens: int  # the completion's max_tokens
    count: Callable[[Messages], int]  # tokens of a rendered prompt as the model reads it (its own tokenizer)

    @property
    def prompt_limit(self) -> int:
        """The most tokens a prompt may have."""
        return self.context_tokens - self.max_new_tokens

    def fits(self, messages: Messages) -> bool:
        return self.count(messages) <= self.prompt_limit


def fit_shots(render: Callable[[Sequence[dict]], Messages], shots: Sequence[dict],
              budget: TokenBudget | None) -> tuple[Messages, int]:
    """The prompt with the most leading `shots` that fits `budget`, and how many it kept.

    `render(rows)` builds the prompt with those priming rows. Token counts grow with the number of rows, so
    the largest fitting count is found by bisection (log2(n) tokenizations). No budget: every shot is kept.
    Raises PromptTooLong when the prompt does not fit with zero shots.
    """
    shots = list(shots)
    full = render(shots)
    if budget is None or budget.fits(full):
        return full, len(shots)
    lo, hi = 0, len(shots) - 1  # the answer lies in [lo, hi]; lo may not fit yet
    if not budget.fits(render([])):
        raise PromptTooLong(f"prompt of {budget.count(render([]))} tokens without any priming example exceeds "
                            f"{budget.prompt_limit} (context {budget.context_tokens} - max_tokens "
                            f"{budget.max_new_tokens})")
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if budget.fits(render(shots[:mid])):
            lo = mid
        else:
            hi = mid - 1
    return render(shots[:lo]), lo
