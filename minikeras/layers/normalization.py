"""normalization layers (being written)."""

__all__ = []
