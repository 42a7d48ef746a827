"""dropout ops (being written)."""

__all__ = []
