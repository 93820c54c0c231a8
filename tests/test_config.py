"""LLMConfig / Settings: presets, environment, .env precedence, masking, lazy errors naming the variable."""

from __future__ import annotations

import logging

import pytest

from remote.config import PRESETS, LLMConfig, Settings, get_preset_config, load_env, mask_secret
from remote.errors import ConfigError, ModelNotConfigured

KEY = "sk-abcdef1234567890xyz"


@pytest.mark.parametrize("name,vision,family", [
    ("openai", True, "gpt"), ("openrouter", True, "gemini"), ("gemini", True, "gemini"), ("qwen", True, "qwen-vl-max"),
    ("qwen3", True, "qwen3-vl"), ("zhipu", True, "glm-v"), ("glm", True, "glm-v"), ("autoglm", True, "autoglm-phone"),
    ("doubao", True, "doubao-vision"), ("doubao-ui-tars", True, "doubao-ui-tars"), ("deepseek", False, "unknown"),
    ("local", True, "qwen2.5-vl"),
])
def test_presets_and_the_family_their_model_names(name, vision, family):
    from remote.ai.families import family_for
    cfg = get_preset_config(name, api_key=KEY)
    assert cfg.provider == name and cfg.supports_vision is vision and family_for(cfg.model).name == family
    assert cfg.base_url.startswith("http") and cfg.model and cfg.configured
    assert cfg.key_env == PRESETS[name].key_env


def test_a_gateway_url_overrides_the_preset_and_the_family_follows_the_model():
    from remote.ai.families import family_for
    cfg = LLMConfig.from_env({"LLM_PROVIDER": "qwen", "DASHSCOPE_API_KEY": KEY,
                              "LLM_BASE_URL": "http://127.0.0.1:3000/v1", "LLM_MODEL": "qwen3-vl-plus"})
    assert cfg.base_url == "http://127.0.0.1:3000/v1" and family_for(cfg.model, cfg.family).name == "qwen3-vl"
    named = LLMConfig.from_env({"LLM_PROVIDER": "local", "LLM_MODEL": "my-finetune", "LLM_MODEL_FAMILY": "UI-TARS-1.5"})
    assert family_for(named.model, named.family).name == "ui-tars-1.5"
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
    ({"LLM_PROVIDER": "openai", "LLM_AGENT": "sometimes"}, "LLM_AGENT must be one of"),
])
def test_bad_values_are_config_errors(env, message):
    with pytest.raises(ConfigError, match=message):
        LLMConfig.from_env(env)


def test_a_stale_coord_mode_is_said_and_ignored(caplog):
    cfg = LLMConfig.from_env({"LLM_PROVIDER": "openai", "OPENAI_API_KEY": KEY, "LLM_COORD_MODE": "pixel"})
    assert cfg.configured and "LLM_COORD_MODE=pixel is no longer read" in caplog.text


def test_an_unknown_family_name_is_a_config_error_listing_the_families():
    from remote.ai.families import family_for
    with pytest.raises(ConfigError, match="unknown model family 'qwen9'") as err:
        family_for("x", "qwen9")
    assert "autoglm-phone" in err.value.hint


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
