"""activations ops (being written)."""

__all__ = []
