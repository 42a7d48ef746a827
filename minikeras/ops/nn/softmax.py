"""softmax ops (being written)."""

__all__ = []
