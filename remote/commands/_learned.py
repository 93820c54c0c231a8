"""The learned tasks a command works with (docs/learning.md): ``--learned-dir`` or REMOTE_LEARNED_DIR."""

from __future__ import annotations

import argparse
from pathlib import Path

from remote.apps.learned import LearnedStore
from remote.config import Settings
from remote.runner.learner import Learner


def store(args: argparse.Namespace, settings: Settings | None = None) -> LearnedStore:
    settings = settings or Settings.from_env()
    folder = Path(args.learned_dir).expanduser() if getattr(args, "learned_dir", None) else settings.learned_dir
    assert folder is not None   # Settings.from_env always sets it
    return LearnedStore(folder, trust_after=settings.learn_trust_after)


def learner(args: argparse.Namespace, settings: Settings | None = None) -> Learner:
    """Replays learned tasks; learns new ones unless ``--no-learn`` (or a dry run, which acts on nothing)."""
    return Learner(store(args, settings), save=not getattr(args, "no_learn", False) and not args.dry_run)
