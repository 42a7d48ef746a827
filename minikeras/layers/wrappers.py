"""wrappers layers (being written)."""

__all__ = []
