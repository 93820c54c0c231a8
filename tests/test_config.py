"""LLMConfig / Settings: presets, environment, .env precedence, masking, lazy errors naming the variable."""

from __future__ import annotations

import logging

import pytest

from remote.config import PRESETS, LLMConfig, Settings, get_preset_config, load_env, mask_secret
from remote.errors import ConfigError, ModelNotConfigured

KEY = "sk-abcdef1234567890xyz"


@pytest.mark.parametrize("name,vision,mode", [
    ("openai", True, "norm1000"), ("openrouter", True, "norm1000"), ("qwen", True, "pixel"),
    ("zhipu", True, "norm999"), ("deepseek", False, "norm1000"), ("local", True, "auto"),
])
def test_presets(name, vision, mode):
    cfg = get_preset_config(name, api_key=KEY)
    assert cfg.provider == name and cfg.supports_vision is vision and cfg.coord_mode == mode
    assert cfg.base_url.startswith("http") and cfg.model and cfg.configured
    assert cfg.key_env == PRESETS[name].key_env


def test_gemini_boxes_are_y_first_and_local_needs_no_key():
    assert get_preset_config("openrouter").box_order == "yxyx"
    assert get_preset_config("local").configured  # no key needed for a localhost server


def test_from_env_picks_the_preset_and_its_key():
    cfg = LLMConfig.from_env({"LLM_PROVIDER": "qwen", "DASHSCOPE_API_KEY": KEY, "LLM_TIMEOUT": "12",
                              "LLM_MAX_RETRIES": "1", "LLM_MODEL": "qwen-vl-plus"})
    assert (cfg.provider, cfg.api_key, cfg.model, cfg.timeout, cfg.max_retries) == \
        ("qwen", KEY, "qwen-vl-plus", 12.0, 1)


def test_from_env_custom_and_none():
    cfg = LLMConfig.from_env({"CUSTOM_LLM_BASE_URL": "http://127.0.0.1:9/v1", "CUSTOM_LLM_MODEL": "m",
                              "CUSTOM_LLM_API_KEY": KEY})
    assert cfg.provider == "custom" and cfg.configured
    assert LLMConfig.from_env({}).configured is False
    local = LLMConfig.from_env({"LLM_PROVIDER": "local", "LOCAL_LLM_BASE_URL": "http://127.0.0.1:11434/v1"})
    assert local.base_url == "http://127.0.0.1:11434/v1"


def test_a_missing_key_is_an_error_only_when_a_model_is_needed():
    cfg = LLMConfig.from_env({"LLM_PROVIDER": "openai"})
    assert cfg.configured is False                     # building it is fine
    with pytest.raises(ModelNotConfigured, match="OPENAI_API_KEY"):
        cfg.require()
    with pytest.raises(ModelNotConfigured, match="LLM_PROVIDER"):
        LLMConfig.none().require()
    typo = LLMConfig.from_env({"LLM_PROVIDER": "qwn"})  # building it is fine too: said when a model is needed
    assert typo.configured is False
    with pytest.raises(ModelNotConfigured, match="unknown LLM_PROVIDER 'qwn' \\(did you mean 'qwen'\\?\\)"):
        typo.require()


@pytest.mark.parametrize("env,message", [
    ({"LLM_PROVIDER": "openai", "LLM_TIMEOUT": "soon"}, "LLM_TIMEOUT"),
    ({"LLM_PROVIDER": "openai", "LLM_COORD_MODE": "inches"}, "coord_mode"),
])
def test_bad_values_are_config_errors(env, message):
    with pytest.raises(ConfigError, match=message):
        LLMConfig.from_env(env)


def test_the_key_is_never_shown(caplog):
    cfg = get_preset_config("openai", api_key=KEY)
    for text in (repr(cfg), str(cfg), str(cfg.redacted())):
        assert KEY not in text and "sk-…xyz" in text
    with caplog.at_level(logging.INFO):
        logging.getLogger("t").info("config %s / %r", cfg, cfg)
    assert KEY not in caplog.text
    assert mask_secret("") == "" and mask_secret("short") == "…" and mask_secret("abcdefghijklmno") == "…mno"


def test_dotenv_is_loaded_and_real_environment_wins(tmp_path, monkeypatch):
    env_file = tmp_path / ".env"
    env_file.write_text("LLM_PROVIDER=zhipu\nZHIPU_API_KEY=from-dotenv-123456\nOPERATION_DELAY=0.5\n", encoding="utf-8")
    monkeypatch.delenv("ZHIPU_API_KEY", raising=False)
    monkeypatch.setenv("LLM_PROVIDER", "deepseek")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "from-environment-123")
    values = load_env(env_file)
    assert values["ZHIPU_API_KEY"] == "from-dotenv-123456" and values["LLM_PROVIDER"] == "deepseek"
    cfg = LLMConfig.from_env(dotenv_path=env_file)
    assert cfg.provider == "deepseek" and cfg.api_key == "from-environment-123" and not cfg.supports_vision
    assert Settings.from_env(dotenv_path=env_file).operation_delay == 0.5


def test_settings_from_env():
    s = Settings.from_env({"ADB_SERIAL": "192.168.1.9:5555", "ADB_PATH": "/usr/bin/adb", "OPERATION_DELAY": "0.2",
                           "ANDROID_ADB_SERVER_PORT": "5038"})
    assert (s.adb_serial, s.adb_path, s.operation_delay, s.adb_port) == ("192.168.1.9:5555", "/usr/bin/adb", 0.2, 5038)
    with pytest.raises(ConfigError, match="OPERATION_DELAY"):
        Settings.from_env({"OPERATION_DELAY": "slow"})
