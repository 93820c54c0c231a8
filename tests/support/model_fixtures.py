"""Fixtures for the AI layer: a real loopback chat-completions server and configs pointed at it.

- ``model_server``: a started :class:`remote.sim.model_server.ModelServer`
  (``.url``, ``.script(purpose, *replies)``, ``.requests``); stopped after the test.
- ``llm_config``: ``LLMConfig.custom`` at that server, key ``SECRET_KEY``, 2 s timeout, 2 retries.
- ``llm_client``: an ``LLMClient`` on ``llm_config`` with a tiny backoff so retry tests stay fast.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from remote.ai.llm import LLMClient, RetryPolicy
from remote.config import LLMConfig
from remote.sim.model_server import ModelServer

SECRET_KEY = "sk-test-SECRET123456"
FAST_RETRY = RetryPolicy(base=0.01, max_wait=0.05, retry_after_cap=0.2)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def llm_config(model_server: ModelServer) -> LLMConfig:
    return LLMConfig.custom(api_key=SECRET_KEY, base_url=model_server.url, model="test-vl",
                            timeout=2.0, max_retries=2, max_image_side=1280)


@pytest.fixture
def llm_client(llm_config: LLMConfig) -> LLMClient:
    return LLMClient(llm_config, retry=FAST_RETRY)
