"""Layer: the unit of a model. Weights are created in ``build(input_shape)``
on the first call; ``call(inputs, training=None)`` holds only the math.

Weights are leaf Tensors (``requires_grad=True`` when trainable) named
``"<layer>/<weight>"``. Calling a layer on symbolic inputs (``Input(...)``)
records a node of the functional graph instead of computing.
"""
import contextlib
import inspect

import numpy

from minikeras._support import load_budget, object_registration
from minikeras._support.safe_mode import deserialization_scope
from minikeras import dtype_policies
from minikeras.autograd import Tensor
from minikeras.autograd.autocast import autocast_scope, current_dtype
from minikeras.backend.dtypes import as_numpy_dtype, is_float_dtype
from minikeras.autograd.tensor import from_array
from minikeras.device import op_errors, placement_device
from minikeras.layers.call_plan import PLAN_INPUTS, PlannedCall, _context, autocast_decision, input_cast, opens_scope
from minikeras.layers.call_plan import record as _record_plan
from minikeras.layers.build_config import BuildConfig
from minikeras.layers.keras_mask import get_keras_mask, set_keras_mask
from minikeras.layers.layer_paths import build_in_name_scope, open_name_scope
from minikeras.layers.layer_weights import LayerWeights, _may_hold_sublayers, _WeightInfo
from minikeras.layers.layer_weights import _creation_order  # noqa: F401  (quantized_weights.py reads it here)
from minikeras.layers.naming import to_snake_case, unique_name
from minikeras.layers.node_attributes import NodeAttributes
from minikeras.layers.quantization import QuantizationHooks
from minikeras.layers.tf_data import call_on_tf_tensors, has_tf_tensors
from minikeras.layers.weight_info import set_weight_info, weight_info
from minikeras.layers.weight_arguments import add_weight_arguments, unique_weight_name
from minikeras._support.nest import flatten as _flatten
from minikeras._support.nest import map_structure as _map
from minikeras._support import array_like
from minikeras._support.argument_validation import check_dtype, entry_point
from minikeras.variables import Variable

# Filled by Layer.__init_subclass__: minikeras's own classes, which a config may
# name, apart from the user's, so that a user's ``class Dense(Layer)`` does not
# hide the library's Dense from every later load.
_LAYER_CLASSES = {}  # class name -> Layer subclass defined inside minikeras
_USER_LAYER_CLASSES = {}  # class name -> the last Layer subclass of that name defined elsewhere


def layer_class_named(name):
    """``_LAYER_CLASSES[name]`` or None; on a miss the layers package first loads the module defining it."""
    if name not in _LAYER_CLASSES:
        from minikeras import layers  # the package, initialized by the time a name is looked up
        layers._import_module_defining(name)
    return _LAYER_CLASSES.get(name)


def user_layer_class_named(name):
    """The last Layer subclass named ``name`` defined outside minikeras, or None
    (the .keras writer's fallback: writing trusts the live model)."""
    return _USER_LAYER_CLASSES.get(name)


def get_layer_class(name, custom_objects=None):
    """The Layer (or Model) subclass a config names: from ``custom_objects``,
    the classes registered with ``register_keras_serializable``, or
    minikeras's own layers. A subclass defined elsewhere is not found by
    name alone (a file must not pick any class that happens to be imported)."""
    if custom_objects and isinstance(name, str) and name in custom_objects:
        return custom_objects[name]
    registered = object_registration.registered_objects().get(name) if isinstance(name, str) else None
    if isinstance(registered, type) and issubclass(registered, Layer):
        return registered
    found = layer_class_named(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(
            f"Unknown layer class {name!r}. Pass it in custom_objects={{'{name}': {name}}} when loading."
        )
    return found


def layer_from_config(layer_class, config, custom_objects=None):
    """``layer_class.from_config(config)``, passing ``custom_objects`` to the
    classes whose from_config takes it (models, Lambda, wrappers). The config
    is data: it runs in a deserialization scope (_support/safe_mode.py), safe
    unless an enclosing load said otherwise."""
    with deserialization_scope():
        if "custom_objects" in inspect.signature(layer_class.from_config).parameters:
            return layer_class.from_config(config, custom_objects=custom_objects)
        return layer_class.from_config(config)


class Layer(PlannedCall, LayerWeights, NodeAttributes, QuantizationHooks, BuildConfig):
    """Base class of all layers (Keras conventions).

    Args:
        trainable: whether the layer's weights are updated by training.
        name: unique default from the class name (``dense``, ``dense_1``).
        dtype: the dtype policy (Keras 3): a DTypePolicy, its name
            (``"float32"``, ``"mixed_float16"``, ``"bfloat16"``...) or its
            serialized config; default: the global policy
            (``mixed_precision.set_global_policy``), float32 unless set.
        autocast: under a mixed policy, cast floating inputs and the
            variables the layer reads to its compute dtype (True, as Keras).
        input_shape / batch_input_shape / input_dim: accepted on the first
            layer of a Sequential model, as in Keras.

    Subclasses implement ``build(input_shape)`` (optional), ``call(inputs,
    training=None)`` and ``get_config()``. ``input`` / ``output`` are the
    symbolic tensors of the layer's first functional call (node_attributes.py).
    """

    #: Whether the layer passes a mask on (Keras: True for layers that keep
    #: the timestep axis, such as Dense or Dropout; a layer overriding
    #: ``compute_mask`` supports masking by definition).
    supports_masking = False

    #: Whether text (NumPy arrays of str/bytes) passes through this layer's
    #: input conversion untouched: True for models and InputLayer, which
    #: hand it to the layer that reads it (TextVectorization, StringLookup
    #: convert their own inputs); other layers refuse it at their entry.
    _passes_text = False

    #: Whether floating inputs are cast to the compute dtype on the way in
    #: (False for functional models: each of their layers casts its own).
    _casts_inputs = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        table = _LAYER_CLASSES if object_registration.is_library_object(cls) else _USER_LAYER_CLASSES
        table[cls.__name__] = cls
        if "build" in cls.__dict__:  # in the layer's name scope, as Keras builds (layer_paths.py)
            cls.build = build_in_name_scope(cls.__dict__["build"])

    def __init__(self, trainable=True, name=None, dtype=None, autocast=True, input_shape=None,
                 batch_input_shape=None, input_dim=None, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword argument(s): {sorted(kwargs)}.")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"A layer name must be a string, received {name!r}.")
        if name is not None and "/" in name:  # it would split the variable paths (layer_paths.py), as in Keras
            raise ValueError(f"A layer name cannot contain '/', received {name!r}.")
        self.name = name or unique_name(to_snake_case(type(self).__name__))
        self._dtype_policy = dtype_policies.get(dtype)
        self.autocast = bool(autocast)
        self._trainable = bool(trainable)
        self.built = False
        self.input_spec = None
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._losses = []
        self._call_has_training = "training" in inspect.signature(self.call).parameters
        self._call_has_mask = "mask" in inspect.signature(self.call).parameters
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (None,) + tuple(input_shape)
        else:
            self._batch_input_shape = None
        self._inbound_nodes = []

    # ------------------------------------------------------------- weights
    def add_weight(self, *args, **kwargs):
        """Create a weight (a :class:`minikeras.Variable`) on the current device.

        Keras 3's signature, every argument optional: ``add_weight(shape=None,
        initializer=None, dtype=None, trainable=True, autocast=True,
        regularizer=None, constraint=None, aggregation="none", name=None)``.
        tf.keras's order with the name first (``add_weight("kernel", shape,
        ...)``) is also accepted, as older scripts use it.

        Args:
            shape: the weight's shape (default ``()``, a scalar).
            initializer: name, Initializer or callable ``(shape, dtype)``;
                default "glorot_uniform" for floats, "zeros" otherwise.
            dtype: default: the layer's dtype.
            trainable: trainable weights get gradients and optimizer updates.
            regularizer: name, Regularizer or callable giving a scalar Tensor.
            constraint: name, Constraint or callable applied after each update.
            name: short name (``"kernel"``); the path is the layer's scope
                and the name (``"sequential/dense/kernel"``, Keras's;
                layers/layer_paths.py); default ``"variable"``, numbered
                when repeated.

        Returns:
            The Variable, also listed in ``weights``.
        """
        from minikeras import constraints, initializers, regularizers

        spec = add_weight_arguments(args, kwargs, type(self).__name__)
        dtype = as_numpy_dtype(spec["dtype"] or self.variable_dtype)
        shape = () if spec["shape"] is None else spec["shape"]
        try:
            shape = (int(shape),) if isinstance(shape, (int, numpy.integer)) else tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            shape = None
        if shape is None or any(size < 0 for size in shape):
            raise ValueError(f"Layer '{self.name}': add_weight expects shape to be a tuple of non-negative ints, "
                             f"received {spec['shape']!r}.")
        initializer = spec["initializer"]
        if initializer is None:
            initializer = "glorot_uniform" if is_float_dtype(dtype) else "zeros"
        init = initializers.get(initializer)
        trainable = bool(spec["trainable"]) and is_float_dtype(dtype)
        name = unique_weight_name(self, spec["name"] or "variable")
        if load_budget.loading():
            # Rebuilding from a file, whose values replace these: bound the
            # size by what the file holds and skip the (float64) initializer.
            load_budget.charge(shape, dtype, f"weight '{self.name}/{name}'")
            init = initializers.get("zeros")
        device = placement_device()
        with device.activate(), op_errors.translated(device, f"the initializer of weight '{self.name}/{name}'"):
            value = init(shape, dtype=dtype)
            with open_name_scope(self):  # path: "<the layers that built it>/<layer>/<name>" (layer_paths.py)
                weight = Variable(value, dtype=dtype, trainable=trainable, device=device,
                                  name=f"{self.name}/{name}", path=name, autocast=spec["autocast"] is not False,
                                  aggregation=spec["aggregation"] or "none")
        weight.requires_grad = trainable and self._trainable
        weight.constraint = constraints.get(spec["constraint"])  # applied by the optimizer after each update
        weight.overwrite_with_gradient = bool(spec["overwrite_with_gradient"])  # float8 scales (optimizer.py)
        set_weight_info(weight, _WeightInfo(regularizers.get(spec["regularizer"]), trainable))
        (self._trainable_weights if trainable else self._non_trainable_weights).append(weight)
        return weight

    # --------------------------------------------------------------- dtypes
    @property
    def dtype_policy(self):
        """The layer's DTypePolicy (``layer.dtype_policy = "mixed_float16"`` sets it)."""
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value):
        self._dtype_policy = dtype_policies.get(value)
        self._quantize_for_policy()  # a quantized policy quantizes a built layer (layers/quantization.py)

    @property
    def dtype(self):
        """The dtype of the layer's weights (Keras: alias of ``variable_dtype``)."""
        return self._dtype_policy.variable_dtype

    @property
    def variable_dtype(self):
        """The dtype the layer's weights are created in."""
        return self._dtype_policy.variable_dtype

    @property
    def compute_dtype(self):
        """The dtype the layer computes in: its floating inputs and the
        variables it reads are cast to it, and its outputs come in it."""
        return self._dtype_policy.compute_dtype

    @property
    def input_dtype(self):
        """The dtype floating inputs are converted to (the compute dtype)."""
        return self._dtype_policy.compute_dtype

    def _autocast_scope(self):
        """The autocast scope ``call`` runs in (Keras's rules): a layer of a
        mixed policy opens one casting to its compute dtype; inside another
        layer's scope, a layer with another compute dtype (or not
        autocasting, or not computing in floats) opens its own."""
        decision = autocast_decision(self._dtype_policy, self.autocast, current_dtype())  # (call_plan.py)
        return autocast_scope(decision) if opens_scope(decision) else contextlib.nullcontext()

    def __setattr__(self, name, value):
        # A Variable made directly (``self.v = Variable(...)``) is a weight
        # of the layer, as Keras 3 tracks it; add_weight's are listed already.
        if isinstance(value, Variable) and weight_info(value) is None and "_trainable_weights" in self.__dict__:
            set_weight_info(value, _WeightInfo(None, value.trainable))
            (self._trainable_weights if value.trainable else self._non_trainable_weights).append(value)
            if value.trainable and not self._trainable:
                value.requires_grad = False
        plan = self.__dict__.get("_sublayer_plan")
        if plan is not None and name not in plan.names and _may_hold_sublayers(name, value):
            del self.__dict__["_sublayer_plan"]  # a new place a sublayer may be held: scan again
        if name in PLAN_INPUTS:
            self.__dict__.pop("_call_plan", None)  # what the call plan's answers depend on (call_plan.py)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self.__dict__.pop("_sublayer_plan", None)  # the attributes' order changes when it comes back
        if name in PLAN_INPUTS:
            self.__dict__.pop("_call_plan", None)
        object.__delattr__(self, name)

    def __getstate__(self):
        # Pickling and copy.deepcopy: what the layer remembers about its own
        # weights (their regularizers) lives beside them (weight_info.py),
        # so it travels with the attributes, paired with each weight.
        state = dict(self.__dict__)
        state.pop("_call_plan", None)  # made again by the next call
        state["_weight_infos"] = [(weight, weight_info(weight)) for weight in self._all_own_weights()]
        return state

    def __setstate__(self, state):
        state = dict(state)
        infos = state.pop("_weight_infos", ())
        self.__dict__.update(state)
        for weight, info in infos:
            set_weight_info(weight, info)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for weight in self._trainable_weights:
            weight.requires_grad = self._trainable
        for layer in self._sublayers():
            layer.trainable = value

    # ---------------------------------------------------------------- call
    def build(self, input_shape):
        """Create the weights for ``input_shape`` (batch axis first, None)."""
        self.built = True

    def call(self, inputs, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError(f"Layer {type(self).__name__} does not implement call().")

    def compute_output_shape(self, input_shape):
        """Output shape for ``input_shape``; by default found by running the
        layer on a small zero batch."""
        return None

    #: TensorFlow's marker for "call as is, never rewrite with AutoGraph": a
    #: layer used in ``Dataset.map`` runs its own host code (layers/tf_data.py).
    autograph_info__ = None

    #: Where the layer's name scope sits, fixed when first opened (Keras's
    #: ``_parent_path``; layer_paths.py): None until then.
    _parent_path = None

    def _call_unplanned(self, inputs, *args, **kwargs):
        """The full call protocol (``__call__`` when no call plan applies,
        call_plan.py); records the plan of this call's signature."""
        # In the layer's name scope: the weights it and its sublayers make get
        # Keras's paths ("sequential/dense/kernel", "outer/inner/kernel").
        with entry_point(type(self).__name__, self.name), open_name_scope(self):
            if has_tf_tensors(inputs):  # inside a tf.data pipeline (layers/tf_data.py)
                return call_on_tf_tensors(self, inputs, args, kwargs)
            outputs = self._checked_call(inputs, *args, **kwargs)
            _record_plan(self, inputs, args, kwargs)
            return outputs

    def _checked_call(self, inputs, *args, **kwargs):
        if isinstance(inputs, Tensor):  # the usual call, on one tensor: no structure to walk
            inputs = self._convert_input(inputs)
        else:
            from minikeras.layers.input import KerasTensor, symbolic_call

            if any(isinstance(leaf, KerasTensor) for leaf in _flatten(inputs)):
                return symbolic_call(self, inputs, args, kwargs)
            if inputs is None:
                raise TypeError(f"{type(self).__name__} {self.name!r}: expected input tensors, received None.")
            inputs = _map(self._convert_input, inputs)
        if not self.built:
            self._build_from(inputs)
        if self.input_spec is not None:
            for leaf, spec in zip(_flatten(inputs), _as_list(self.input_spec)):
                if spec is not None and isinstance(leaf, Tensor):
                    spec.check(self.name, leaf.shape)
        training = kwargs.pop("training", None)
        outer = getattr(_context, "training", None)
        if training is None:
            training = outer
        if self._call_has_training:
            kwargs["training"] = training
        previous_mask = kwargs.get("mask")
        if previous_mask is None:
            previous_mask = _mask_of(inputs)
        if self._call_has_mask:
            kwargs["mask"] = previous_mask
        else:
            kwargs.pop("mask", None)
        self.__dict__["_losses"] = []  # __setattr__'s sublayer bookkeeping: never a layer
        _context.training = training
        try:
            with self._autocast_scope():
                outputs = self.call(inputs, *args, **kwargs)
        finally:
            _context.training = outer
        if previous_mask is not None or type(self).compute_mask is not Layer.compute_mask:
            self._attach_mask(inputs, outputs, previous_mask)
        return outputs

    # -------------------------------------------------------------- masks
    def compute_mask(self, inputs, previous_mask):
        """The mask of the output (Keras): the input's mask for layers that
        support masking, None (the mask stops here) for the others."""
        return previous_mask if self.supports_masking else None

    def _attach_mask(self, inputs, outputs, previous_mask):
        if not self.supports_masking and type(self).compute_mask is Layer.compute_mask:
            return
        masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        flat_outputs = _flatten(outputs)
        flat_masks = _flatten(masks) if isinstance(masks, (list, tuple)) else [masks] * len(flat_outputs)
        for output, mask in zip(flat_outputs, flat_masks):
            if isinstance(output, Tensor) and mask is not None and get_keras_mask(output) is None:
                set_keras_mask(output, mask)

    def _convert_input(self, value):
        """``value`` as a Tensor; floating ones in the compute dtype when the
        layer autocasts (integers and bools keep theirs, as in Keras)."""
        if isinstance(value, Tensor):
            cast = input_cast(self, value.dtype)
            return value if cast is None else value.astype(cast)
        compute = self._dtype_policy.compute_dtype
        wanted = self._casts_inputs and self.autocast and is_float_dtype(compute)
        if value is None or isinstance(value, (str, bytes)):
            return value
        device = placement_device()
        array = array_like.to_array(value, f"{type(self).__name__} {self.name!r}")
        if self._passes_text and array_like.is_string_array(array):
            return array  # text stays on the host, for the layer that reads it
        check_dtype(f"{type(self).__name__} {self.name!r}", array.dtype)
        if not wanted and is_float_dtype(compute):
            compute = self._dtype_policy.variable_dtype  # a model's inputs: its Input's dtype
        cast = is_float_dtype(compute) and is_float_dtype(array.dtype) and array.dtype.name != compute
        if cast and isinstance(array, numpy.ndarray):
            array, cast = array.astype(as_numpy_dtype(compute)), False  # on the host, before the upload
        with device.activate():
            array = device.asarray(array)
            if cast:
                array = array.astype(as_numpy_dtype(compute))
        return from_array(array, device)

    def _build_from(self, inputs):
        shapes = _map(lambda leaf: tuple(leaf.shape) if isinstance(leaf, Tensor) else None, inputs)
        build_shape = _map(lambda s: (None,) + tuple(s[1:]) if isinstance(s, tuple) and s else s, shapes)
        if isinstance(shapes, tuple) and all(isinstance(s, int) for s in shapes):
            build_shape = (None,) + tuple(shapes[1:])
        self.build(build_shape)
        self._build_input_shape = build_shape  # saved as Keras's build_config
        self.built = True

    # ------------------------------------------------------------- config
    def get_config(self):
        """The constructor arguments (JSON-serialisable)."""
        config = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_policy.name}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = list(self._batch_input_shape)
        return config

    @classmethod
    def from_config(cls, config):
        """The layer ``get_config()`` described. The config is data: in safe
        mode (the default) it may not make the layer read a file it names
        (a lookup's vocabulary path), as in Keras's deserialization."""
        with deserialization_scope():
            return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _mask_of(inputs):
    """The masks attached to ``inputs`` (one, a list, or None when none is)."""
    if isinstance(inputs, Tensor):
        return get_keras_mask(inputs)
    if isinstance(inputs, (list, tuple)):
        masks = [get_keras_mask(leaf) if isinstance(leaf, Tensor) else None for leaf in inputs]
        return masks if any(mask is not None for mask in masks) else None
    return None


def _as_list(spec):
    return list(spec) if isinstance(spec, (list, tuple)) else [spec]



def weight_constraint(weight):
    """The constraint attached to ``weight`` by add_weight, or None."""
    return getattr(weight, "constraint", None)


def walk_layers(model):
    """Every layer inside ``model`` (depth first, each once), model excluded."""
    found, seen = [], {id(model)}
    pending = list(reversed(model._sublayers()))
    while pending:
        layer = pending.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        found.append(layer)
        pending.extend(reversed(layer._sublayers()))
    return found
