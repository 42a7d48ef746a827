"""Quantization hooks of every layer (Keras 3's ``Layer.quantize`` family).

``layer.quantize(mode, config=None)`` replaces a built layer's float
weights by quantized ones and gives the layer a quantized dtype policy
(``"int8_from_float32"``...). Every layer has the method: Dense,
EinsumDense and Embedding implement it (layers/quantized_*.py), the others
raise Keras's NotImplementedError, which ``Model.quantize`` turns into a
warning. As in Keras, the arguments are checked before any layer's own
``quantize`` runs, also for a subclass that overrides it: an unknown mode,
an unbuilt layer, a layer quantized already, int8 over float16.

A layer built under a quantized policy (a quantized model being loaded)
creates its quantized variables directly, in ``build``.
"""
import functools

from minikeras.dtype_policies.quantized import QUANTIZATION_MODES
from minikeras.quantizers.quantization_config import validate_and_resolve_config

__all__ = ["QuantizationHooks"]


def _checked_quantize(quantize):
    """``quantize`` with Keras's argument checks in front (its ``quantize_wrapper``)."""
    @functools.wraps(quantize)
    def checked(self, mode=None, config=None, **kwargs):
        if self.__dict__.get("_quantizing"):  # a subclass's quantize calling its parent's
            return quantize(self, mode=mode, config=config, **kwargs)
        config = validate_and_resolve_config(mode, config)
        mode = config.mode
        self._check_quantize_args(mode, self.compute_dtype)
        self.__dict__["_quantizing"] = True
        try:
            return quantize(self, mode=mode, config=config, **kwargs)
        finally:
            self.__dict__["_quantizing"] = False

    checked._checks_arguments = True
    return checked


class QuantizationHooks:
    """What every layer has of Keras's quantization API (a base of Layer)."""

    _is_quantized = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        found = cls.quantize  # its own, or a mixin's (Dense's comes from layers/core/quantized_dense.py)
        if not getattr(found, "_checks_arguments", False):
            cls.quantize = _checked_quantize(found)

    @property
    def quantization_mode(self):
        """The layer's quantization mode ("int8", "float8", ...), None when it is not quantized."""
        return self.dtype_policy.quantization_mode

    def quantize(self, mode=None, type_check=True, config=None):
        """Quantize the layer's weights (Keras 3's ``Layer.quantize``).

        Args:
            mode: "int8", "int4" or "float8" (or a config's mode).
            type_check: False lets a subclass of a quantizable layer use its
                parent's quantization.
            config: a ``minikeras.quantizers.QuantizationConfig``.

        Raises:
            ValueError: an unknown mode, an unbuilt layer, a layer quantized
                already, int8 with a float16 compute dtype.
            NotImplementedError: a layer that cannot be quantized.
        """
        raise self._not_implemented_error(self.quantize)

    def quantized_build(self, input_shape, mode, config=None):
        """Create the quantized variables (layers that quantize override it)."""
        raise self._not_implemented_error(self.quantized_build)

    def _check_quantize_args(self, mode, compute_dtype):
        if not self.built:
            raise ValueError(f"Cannot quantize a layer that isn't yet built. Layer '{self.name}' (of type "
                             f"'{type(self).__name__}') is not built yet.")
        if self._is_quantized:
            raise ValueError(f"Layer '{self.name}' is already quantized with dtype_policy="
                             f"'{self.dtype_policy.name}'. Received: mode={mode}")
        if mode not in QUANTIZATION_MODES:
            raise ValueError(f"Invalid quantization mode. Expected one of {QUANTIZATION_MODES}. Received: mode={mode}")
        if mode == "int8" and compute_dtype == "float16":
            raise ValueError(f"Quantization mode='{mode}' doesn't work well with compute_dtype='float16'. Consider "
                             "loading model/layer with another dtype policy such as 'mixed_bfloat16' or "
                             "'mixed_float16' before calling `quantize()`.")

    def _quantize_for_policy(self):
        """After ``layer.dtype_policy = <quantized policy>``: a built layer not
        quantized yet quantizes itself to that mode (Keras's setter)."""
        mode = self.dtype_policy.quantization_mode
        if mode is None or not self.built or self._is_quantized:
            return
        if mode == "gptq":
            raise ValueError(f"Implicitly enabling GPTQ quantization by setting `dtype_policy` to "
                             f"'{self.dtype_policy.name}' is not supported. GPTQ requires a calibration dataset and a "
                             "`GPTQConfig` object.\n\nPlease use the `.quantize('gptq', config=...)` method on the "
                             "layer or model instead.")
        self.quantize(mode)

    def _not_implemented_error(self, attr, msg=None):
        kind, name = ("method", attr.__name__) if callable(attr) else ("attribute", str(attr))
        return NotImplementedError(f"Layer {type(self).__name__} does not have a `{name}` {kind} implemented."
                                   f"{'' if msg is None else ' ' + msg}")

    def _unsupported_mode_error(self, mode):
        """The error of a mode Keras has and minikeras's layers do not run (gptq, awq)."""
        if mode in ("gptq", "awq"):
            return NotImplementedError(
                f"Layer {type(self).__name__} '{self.name}': the '{mode}' quantization mode (post-training "
                "calibration of large language models) is not supported by minikeras; 'int8', 'int4' and 'float8' "
                "are (README, Quantization: names not supported).")
        return self._quantization_mode_error(mode)

    def _quantization_mode_error(self, mode):
        return NotImplementedError(f"Invalid quantization mode. Expected one of {QUANTIZATION_MODES}. "
                                   f"Received: quantization_mode={mode}")


QuantizationHooks.quantize = _checked_quantize(QuantizationHooks.quantize)
