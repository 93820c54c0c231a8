"""Configuration: model endpoints (`LLMConfig`, presets) and device settings (`Settings`).

Read at the edge (the CLI) and passed down as arguments; nothing here runs at
import time. `.env` is loaded with python-dotenv and real environment variables
win over it. A key is never shown whole: ``repr()`` prints ``sk-…xyz`` at most.

A preset is an endpoint and a default model. What a model's coordinates mean, how
it is asked and what frame it sees belong to its *family*, which follows the
model's name (``remote.ai.families``; ``LLM_MODEL_FAMILY`` names it when the name
does not say it). ``LLM_BASE_URL`` points any preset at a gateway or proxy
(OneAPI/new-api, LiteLLM, OpenRouter, vLLM, Ollama): the family still follows
the model. ``LLM_AGENT`` says when a phone-agent model drives a task in its own
protocol: ``auto`` (models that can only drive, whenever no template fits),
``always`` (every task; a template that fits gives only its final check), ``off``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from remote.errors import ConfigError, ModelNotConfigured, did_you_mean

logger = logging.getLogger(__name__)

AGENT_MODES = ("auto", "always", "off")
BIGMODEL = "https://open.bigmodel.cn/api/paas/v4"
DASHSCOPE = "https://dashscope.aliyuncs.com/compatible-mode/v1"
ARK = "https://ark.cn-beijing.volces.com/api/v3"


@dataclass(frozen=True)
class Preset:
    base_url: str
    model: str
    key_env: str                 # the variable that holds this provider's key
    supports_vision: bool = True
    needs_key: bool = True


# Model ids are the providers' own (they add dated versions): LLM_MODEL picks another one.
PRESETS: dict[str, Preset] = {
    "openai": Preset("https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
    "openrouter": Preset("https://openrouter.ai/api/v1", "google/gemini-2.5-flash", "OPENROUTER_API_KEY"),
    "gemini": Preset("https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.5-flash",
                     "GEMINI_API_KEY"),
    "qwen": Preset(DASHSCOPE, "qwen-vl-max", "DASHSCOPE_API_KEY"),
    "qwen3": Preset(DASHSCOPE, "qwen3-vl-plus", "DASHSCOPE_API_KEY"),
    "zhipu": Preset(BIGMODEL, "glm-4v-flash", "ZHIPU_API_KEY"),
    "glm": Preset(BIGMODEL, "glm-4.5v", "ZHIPU_API_KEY"),
    "autoglm": Preset(BIGMODEL, "autoglm-phone", "ZHIPU_API_KEY"),
    "doubao": Preset(ARK, "doubao-seed-1-6-vision-250815", "ARK_API_KEY"),
    "doubao-ui-tars": Preset(ARK, "doubao-1-5-ui-tars-250428", "ARK_API_KEY"),
    "deepseek": Preset("https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY", supports_vision=False),
    "local": Preset("http://localhost:8000/v1", "Qwen/Qwen2.5-VL-7B-Instruct", "LOCAL_LLM_API_KEY",
                    needs_key=False),
}


def mask_secret(secret: str | None) -> str:
    """``sk-abcdef123456xyz`` -> ``sk-…xyz``; short or empty secrets show nothing of themselves."""
    if not secret:
        return ""
    if len(secret) < 12:
        return "…"
    prefix = secret[:3] if secret[2:3] == "-" else ""
    return f"{prefix}…{secret[-3:]}"


@dataclass(frozen=True)
class LLMConfig:
    provider: str = "custom"
    api_key: str = field(default="", repr=False)
    base_url: str = ""
    model: str = ""
    timeout: float = 60.0
    max_retries: int = 3
    max_image_side: int = 1280
    supports_vision: bool = True
    key_env: str = "CUSTOM_LLM_API_KEY"
    needs_key: bool = True
    family: str = ""             # LLM_MODEL_FAMILY: names the family when the model's name does not say it
    agent: str = "auto"          # LLM_AGENT: auto | always | off
    problem: str = ""            # why no call can be made, said when one is needed (an unknown LLM_PROVIDER)

    def __post_init__(self) -> None:
        if self.agent not in AGENT_MODES:
            raise ConfigError(f"LLM_AGENT must be one of {', '.join(AGENT_MODES)}, not {self.agent!r}")
        if self.timeout <= 0 or self.max_retries < 0 or self.max_image_side < 64:
            raise ConfigError("timeout must be > 0, max_retries >= 0 and max_image_side >= 64")

    def __repr__(self) -> str:
        return (f"LLMConfig(provider={self.provider!r}, model={self.model!r}, base_url={self.base_url!r}, "
                f"api_key={mask_secret(self.api_key)!r}, supports_vision={self.supports_vision}, "
                f"family={self.family!r}, timeout={self.timeout}, max_retries={self.max_retries})")

    __str__ = __repr__

    @property
    def configured(self) -> bool:
        """True when a call could be made: a URL, a model, and a key where one is needed."""
        return bool(self.base_url and self.model and (self.api_key or not self.needs_key) and not self.problem)

    def require(self) -> LLMConfig:
        """Return self, or raise `ModelNotConfigured` naming the variable to set."""
        if self.problem:
            raise ModelNotConfigured(self.problem, hint=f"LLM_PROVIDER is one of: custom, {', '.join(PRESETS)}")
        if not self.base_url:
            raise ModelNotConfigured("no model is configured",
                                     hint=f"set LLM_PROVIDER ({', '.join(PRESETS)}) "
                                          "and its key in .env, or CUSTOM_LLM_BASE_URL, CUSTOM_LLM_MODEL and "
                                          "CUSTOM_LLM_API_KEY")
        if not self.model:
            raise ModelNotConfigured("no model name is configured", hint="set CUSTOM_LLM_MODEL or LLM_MODEL")
        if self.needs_key and not self.api_key:
            raise ModelNotConfigured(f"no API key for provider {self.provider!r}",
                                     hint=f"set {self.key_env} in .env or the environment")
        return self

    def redacted(self) -> dict[str, object]:
        """A dict for logs and run records: the key is masked."""
        data = dataclasses.asdict(self)
        data["api_key"] = mask_secret(self.api_key)
        return data

    @classmethod
    def custom(cls, api_key: str = "", base_url: str = "", model: str = "", **kwargs: object) -> LLMConfig:
        """Any OpenAI-compatible endpoint: ``LLMConfig.custom(api_key=..., base_url=..., model=...)``."""
        return cls(provider="custom", api_key=api_key, base_url=base_url, model=model, **kwargs)  # type: ignore[arg-type]

    @classmethod
    def none(cls) -> LLMConfig:
        """No model: every free tier works, a model call raises `ModelNotConfigured`."""
        return cls(provider="none")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, dotenv_path: str | Path | None = None) -> LLMConfig:
        """Build the config from the environment (and `.env`, which real variables override).

        ``LLM_PROVIDER`` picks a preset; ``custom`` (or CUSTOM_LLM_BASE_URL set with no
        provider) uses CUSTOM_LLM_*. LLM_BASE_URL, LLM_MODEL, LLM_MODEL_FAMILY, LLM_AGENT, LLM_TIMEOUT,
        LLM_MAX_RETRIES and LLM_MAX_IMAGE_SIDE override any preset.
        """
        env = dict(load_env(dotenv_path) if env is None else env)
        provider = (env.get("LLM_PROVIDER") or "").strip().lower()
        if not provider:
            provider = "custom" if env.get("CUSTOM_LLM_BASE_URL") else "none"
        if provider not in ("none", "custom") and provider not in PRESETS:
            # said when a model is needed: a typo here must not stop template-only tasks
            return cls(provider=provider, problem=f"unknown LLM_PROVIDER {provider!r} "
                       f"({did_you_mean(provider, ['custom', *PRESETS], 'providers')})")
        config = cls._base(provider, env)
        overrides = _overrides(env)
        config = dataclasses.replace(config, **overrides) if overrides else config  # type: ignore[arg-type]
        if config.api_key and not config.api_key.isascii():
            raise ConfigError(f"{config.key_env or 'the API key'} contains characters that are not ASCII "
                              "(a key copied with quotes or spaces of another alphabet?)",
                              hint="paste the key again as plain text")
        return config

    @classmethod
    def _base(cls, provider: str, env: Mapping[str, str]) -> LLMConfig:
        """The config of ``provider`` (none, custom or a preset) before the LLM_* overrides."""
        if provider == "none":
            return cls.none()
        if provider == "custom":
            return cls.custom(api_key=env.get("CUSTOM_LLM_API_KEY", ""), base_url=env.get("CUSTOM_LLM_BASE_URL", ""),
                              model=env.get("CUSTOM_LLM_MODEL", ""),
                              needs_key=_env_bool(env, "CUSTOM_LLM_NEEDS_KEY", True))
        base_url = env.get("LOCAL_LLM_BASE_URL", "") if provider == "local" else ""
        return get_preset_config(provider, api_key=env.get(PRESETS[provider].key_env, ""),
                                 **({"base_url": base_url} if base_url else {}))


def _overrides(env: Mapping[str, str]) -> dict[str, object]:
    """What LLM_BASE_URL, LLM_MODEL, LLM_MODEL_FAMILY, LLM_AGENT, LLM_TIMEOUT, LLM_MAX_RETRIES,
    LLM_MAX_IMAGE_SIDE and LLM_SUPPORTS_VISION change in any preset (a number that is not one: ConfigError)."""
    overrides: dict[str, object] = {}
    for var, name in (("LLM_BASE_URL", "base_url"), ("LLM_MODEL", "model"), ("LLM_MODEL_FAMILY", "family"),
                      ("LLM_AGENT", "agent")):
        if (env.get(var) or "").strip():
            overrides[name] = env[var].strip().lower() if name in ("family", "agent") else env[var].strip()
    for var, name, kind in (("LLM_TIMEOUT", "timeout", float), ("LLM_MAX_RETRIES", "max_retries", int),
                            ("LLM_MAX_IMAGE_SIDE", "max_image_side", int)):
        if env.get(var):
            try:
                overrides[name] = kind(env[var])
            except ValueError as exc:
                raise ConfigError(f"{var}={env[var]!r} is not a number") from exc
    if env.get("LLM_COORD_MODE"):   # said, not fatal: a stale .env must not stop template-only tasks
        logger.warning("LLM_COORD_MODE=%s is no longer read: what a model's numbers mean follows its family; "
                       "remove it, and set LLM_MODEL_FAMILY if the model's name does not say its family "
                       "(docs/models.md)", env["LLM_COORD_MODE"])
    if "LLM_SUPPORTS_VISION" in env:
        overrides["supports_vision"] = _env_bool(env, "LLM_SUPPORTS_VISION", True)
    return overrides


def get_preset_config(name: str, api_key: str = "", **overrides: object) -> LLMConfig:
    """A ready config for a known provider: ``get_preset_config("qwen", api_key="sk-...")``."""
    preset = PRESETS.get(name)
    if preset is None:
        raise ConfigError(f"unknown preset {name!r}", hint=f"use one of: {', '.join(PRESETS)}")
    values: dict[str, object] = {
        "provider": name, "api_key": api_key, "base_url": preset.base_url, "model": preset.model,
        "supports_vision": preset.supports_vision, "key_env": preset.key_env, "needs_key": preset.needs_key,
    }
    values.update(overrides)
    return LLMConfig(**values)  # type: ignore[arg-type]


TREE_MODES = ("auto", "server", "dump")    # remote.core.device.fast_tree.TreeMode
FRAMES_MODES = ("needed", "every")         # remote.core.device.fast_tree.FRAMES_MODES


@dataclass(frozen=True)
class Settings:
    """Device-side settings: ADB_PATH, ADB_SERIAL, OPERATION_DELAY (seconds after each action), and
    REMOTE_MODULES: folders of app modules besides the shipped ones (separated like PATH), REMOTE_LEARNED_DIR:
    where learned tasks go (default ``$XDG_DATA_HOME/remote/learned``, i.e. ``~/.local/share/remote/learned``),
    REMOTE_LEARN_TRUST_AFTER: clean replays before a learned task is trusted (default 2), REMOTE_TREE: where UI
    trees come from, ``auto`` (uiautomator2's resident server, falling back to ``uiautomator dump``), ``server``
    or ``dump`` (docs/devices.md "The resident tree server"); REMOTE_FRAMES: with the server's trees, a screen's
    frame taken when something reads its pixels (``needed``, the default) or for every screen (``every``)."""

    adb_path: str = ""
    adb_serial: str = ""
    operation_delay: float = 0.0
    adb_host: str = "127.0.0.1"
    adb_port: int = 5037
    module_dirs: tuple[Path, ...] = ()
    learned_dir: Path | None = None        # from_env fills it in
    learn_trust_after: int = 2
    tree: str = "auto"
    frames: str = "needed"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, dotenv_path: str | Path | None = None) -> Settings:
        env = dict(load_env(dotenv_path) if env is None else env)
        try:
            delay = float(env.get("OPERATION_DELAY") or 0)
            port = int(env.get("ANDROID_ADB_SERVER_PORT") or 5037)
            trust = int(env.get("REMOTE_LEARN_TRUST_AFTER") or 2)
        except ValueError as exc:
            raise ConfigError("OPERATION_DELAY / ANDROID_ADB_SERVER_PORT / REMOTE_LEARN_TRUST_AFTER must be numbers "
                              f"({exc})") from exc
        data_home = Path(env.get("XDG_DATA_HOME") or "~/.local/share").expanduser()
        learned = Path(env["REMOTE_LEARNED_DIR"]).expanduser() if env.get("REMOTE_LEARNED_DIR") \
            else data_home / "remote" / "learned"
        dirs = tuple(Path(d).expanduser() for d in (env.get("REMOTE_MODULES") or "").split(os.pathsep) if d.strip())
        tree = (env.get("REMOTE_TREE") or "auto").strip().lower()
        if tree not in TREE_MODES:
            raise ConfigError(f"REMOTE_TREE must be one of {', '.join(TREE_MODES)}, not {tree!r}")
        frames = (env.get("REMOTE_FRAMES") or "needed").strip().lower()
        if frames not in FRAMES_MODES:
            raise ConfigError(f"REMOTE_FRAMES must be one of {', '.join(FRAMES_MODES)}, not {frames!r}")
        return cls(tree=tree, frames=frames, module_dirs=dirs, adb_path=env.get("ADB_PATH", ""), adb_serial=env.get("ADB_SERIAL", ""),
                   operation_delay=max(0.0, delay), adb_host=env.get("ANDROID_ADB_SERVER_HOST") or "127.0.0.1",
                   adb_port=port, learned_dir=learned, learn_trust_after=max(1, trust))


SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def secret_values(env: Mapping[str, str] | None = None, *, min_length: int = 6) -> list[str]:
    """Values of variables that look secret (``*_API_KEY``, ``*_TOKEN`` ...), longest first, for masking."""
    env = load_env() if env is None else env
    values = {v.strip() for k, v in env.items() if any(m in k.upper() for m in SECRET_MARKERS)
              and v and len(v.strip()) >= min_length}
    return sorted(values, key=len, reverse=True)


def mask_all(text: str, secrets: list[str]) -> str:
    """``text`` with every secret replaced by its mask (``sk-a…z9``)."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, mask_secret(secret))
    return text


def load_env(dotenv_path: str | Path | None = None) -> dict[str, str]:
    """The process environment over the values of `.env` (real variables win)."""
    from dotenv import dotenv_values

    path = Path(dotenv_path) if dotenv_path else Path.cwd() / ".env"
    values = {k: v for k, v in dotenv_values(path).items() if v is not None} if path.is_file() else {}
    values.update(os.environ)
    return values


def _env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")
