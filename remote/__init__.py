"""remote: automate an Android phone from one sentence.

    python -m remote run --device sim "给张三发微信消息说你好"
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
