"""What a command-line value may be: each function is an argparse ``type=`` that turns the text into
the value or says in one line why it cannot (a port, a count, seconds, a task sentence)."""

from __future__ import annotations

import argparse


def port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 1..65535")
    return value


def port_or_zero(text: str) -> int:
    """A port, or 0 for any free one."""
    return 0 if text.strip() == "0" else port(text)


def _whole_number(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} must be at least {minimum}" if minimum
                                         else f"{value} must not be negative")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return _whole_number(text, 0)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be a positive number of seconds")
    return value


def task_text(text: str) -> str:
    from remote.apps import check_task
    from remote.errors import ConfigError

    try:
        check_task(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message} ({exc.hint})") from None
    return text


def env_pair(text: str) -> tuple[str, str]:
    """``contact=张三`` -> ``("contact", "张三")`` (``-e`` fills a template's slot the sentence does not say)."""
    from remote.core.plan.values import env_entry

    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not KEY=VALUE (e.g. -e contact=张三)")
    try:
        return env_entry(key.strip(), value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
