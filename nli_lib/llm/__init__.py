"""LLM access for the companion: cached OpenAI-compatible client, offline stand-in, and the papers' prompts.

>>> from nli_lib.llm import OfflineLLM, PROMPTS
>>> from nli_lib.cache import CallCache
>>> llm = OfflineLLM(lambda messages: "n\\nNot enough information. [END]", name="always-n", cache=CallCache(":memory:"))
>>> t = PROMPTS["atoms.B1"]
>>> t.parse(llm.chat(t.render(premise="A man sleeps.", hypothesis="A man dreams.")).text).value
'neutral'
"""
from ..cache import ReplayMiss
from .client import EndpointDown, LLMCallError, LLMClient, LLMConfig, LLMError, LLMResult, OfflineLLM
from .factory import make_llm
from .prompts import PROMPTS, Parsed, PromptTemplate

__all__ = [
    "EndpointDown", "LLMCallError", "LLMClient", "LLMConfig", "LLMError", "LLMResult", "OfflineLLM", "make_llm",
    "PROMPTS", "Parsed", "PromptTemplate", "ReplayMiss",
]
