"""Weight regularizers (minimal; being extended)."""


def get(identifier):
    if identifier is None:
        return None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer {identifier!r}.")
