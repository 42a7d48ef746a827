"""merge layers (being written)."""

__all__ = []
