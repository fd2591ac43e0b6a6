"""What a model call costs: prices per million tokens, as `LLM_PRICE_PER_MTOK` gives them.

The setting is read in the composition root only; this module parses its text and prices a call.
Its forms (USD per million tokens, input then output):

    LLM_PRICE_PER_MTOK="2.5,10"                                  every model
    LLM_PRICE_PER_MTOK="gpt-4o=2.5,10; gpt-4o-mini=0.15,0.6"     these models only
    LLM_PRICE_PER_MTOK="gpt-4o=2.5,10; *=0.15,0.6"               these, and `*` for the others

A model without a price (a local one, when the setting is unset) has no cost: messages carry none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

ANY_MODEL = "*"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens read (`input`) and written (`output`)."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return round((prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000, 8)


@dataclass(frozen=True, slots=True)
class Prices:
    """The prices Navi knows, by model name (`*`: any other model)."""

    by_model: Mapping[str, Price] = field(default_factory=dict)
    # The model list's prices (MODELS_FILE, docs/models.md), by endpoint id: before the model's.
    by_endpoint: Mapping[str, Price] = field(default_factory=dict)

    def of(self, model: str, endpoint: str = "") -> Price | None:
        return (
            (self.by_endpoint.get(endpoint) if endpoint else None)
            or self.by_model.get(model)
            or self.by_model.get(ANY_MODEL)
        )

    def cost(
        self, model: str, prompt_tokens: int, completion_tokens: int, endpoint: str = ""
    ) -> float | None:
        """The call's cost in USD, or None when `model` (at `endpoint`) has no price."""
        price = self.of(model, endpoint)
        return None if price is None else price.cost(prompt_tokens, completion_tokens)

    @classmethod
    def parse(cls, text: str | None) -> Prices:
        """`LLM_PRICE_PER_MTOK`'s text as prices; raises ValueError saying what is wrong."""
        by_model: dict[str, Price] = {}
        for part in (text or "").split(";"):
            part = part.strip()
            if not part:
                continue
            model, _, pair = part.rpartition("=")
            model = model.strip() or ANY_MODEL
            if model in by_model:
                raise ValueError(f"{model!r} is priced twice")
            by_model[model] = _price(pair, model)
        return cls(by_model)


def _price(pair: str, model: str) -> Price:
    values = [v.strip() for v in pair.split(",")]
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        numbers = []
    if len(numbers) != 2 or not all(math.isfinite(n) and n >= 0 for n in numbers):
        raise ValueError(
            f"the price of {model!r} must be two numbers, input and output USD per million tokens "
            f"(such as 2.5,10), not {pair.strip()!r}"
        )
    return Price(numbers[0], numbers[1])
