"""recurrent layers (being written)."""

__all__ = []
