"""The OCR tier's onnxruntime sessions, built alike for the tier, the second recognizer and the bench's
peer: on the cores the process may use, with threads that sleep rather than spin while they wait."""

from __future__ import annotations

import os
from typing import Any


def cores() -> int:
    """The cores this process may run on: its CPU affinity (a container's or ``taskset``'s limit shows
    there, not in ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # no affinity on this platform (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def session_options(threads: int, *, arena: bool) -> Any:
    """onnxruntime's options for one of the tier's sessions: ``threads`` intra-op threads that sleep
    when they have nothing to do (``session.intra_op.allow_spinning`` "0", onnxruntime's threading
    docs: a spinning thread holds its core while it waits, which beside other work is time taken from
    it), sequential execution, all graph optimizations; ``arena``: keep the memory arena."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.enable_cpu_mem_arena = arena
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return opts


def inference_session(model: str, threads: int, *, arena: bool = False) -> Any:
    """An onnxruntime session with :func:`session_options`, of ``model``: an ONNX file, or one of the models
    RapidOCR ships ("Det", "Cls", "Rec"); the tier's sessions and the bench's peer are built alike."""
    import onnxruntime as ort

    if model in ("Det", "Cls", "Rec"):
        from rapidocr_onnxruntime.main import DEFAULT_CFG_PATH
        from rapidocr_onnxruntime.utils import read_yaml, update_model_path

        model = update_model_path(read_yaml(DEFAULT_CFG_PATH))[model]["model_path"]
    return ort.InferenceSession(model, sess_options=session_options(threads, arena=arena),
                                providers=["CPUExecutionProvider"])
