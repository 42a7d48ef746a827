"""conv layers (being written)."""

__all__ = []
