"""The model backends' settings: the first section of `navi.config.Settings`, declared here.

They sit beside the backends so that a new backend adds its settings in `llm/` with its module and
its entry in `backends.py`. `Settings` (navi/config.py) includes this class; as everywhere, only
the composition root reads the values (`compose/models.build_backends` hands each backend the ones
its entry names).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from navi.llm import backends
from navi.llm.prices import Prices


class BackendSettings(BaseModel):
    ollama_host: str = "http://localhost:11434"
    ollama_default_model: str = "gemma4:e2b-it-q8_0"
    # Navi's context window for every backend (and what Ollama is asked to run the model with).
    ollama_num_ctx: int = Field(65536, ge=512)
    ollama_think: bool = True
    openai_api_key: str = ""
    openai_base_url: str = ""
    openai_default_model: str = "gpt-4o-mini"
    anthropic_api_key: str = ""
    anthropic_base_url: str = ""
    anthropic_default_model: str = "claude-sonnet-4-5"
    anthropic_max_tokens: int = Field(8192, ge=1)
    default_llm_backend: str = "ollama"
    # What models cost, USD per million tokens in and out: "2.5,10" for every model, or per model
    # "gpt-4o=2.5,10; *=0.15,0.6" (navi/llm/prices.py). An answer's metadata then carries its `cost`;
    # empty (local models): no cost.
    llm_price_per_mtok: str = ""

    @field_validator("ollama_host", "openai_base_url", "anthropic_base_url")
    @classmethod
    def _server_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("llm_price_per_mtok")
    @classmethod
    def _prices(cls, value: str) -> str:
        Prices.parse(value)  # raises ValueError saying what is wrong
        return value

    @field_validator("default_llm_backend")
    @classmethod
    def _backend(cls, value: str) -> str:
        if value not in backends.names():
            raise ValueError(f"must be one of {', '.join(backends.names())}")
        return value
