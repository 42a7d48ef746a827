"""Finds, by reading the source, what minikeras asks of the array module,
and checks it against the real CuPy API (test helper of test_cupy_api.py).

On the CPU every ``xp.<name>`` is NumPy, which is more lenient than CuPy
(more functions, more keywords, more ndarray attributes), so a call that
CuPy lacks fails only on the first real GPU. This scan reads every module of
the package with `ast` and collects:

* array-module uses: attribute chains rooted at ``xp``, ``cupy``, ``cp``,
  ``<anything>.xp`` or a local alias of one (``xp = device.xp``), e.g.
  ``xp.maximum``, ``xp.random.default_rng``, ``xp.linalg.norm``, with the
  keyword arguments of each call;
* device random generators (assigned from ``*.random.default_rng(...)`` or
  from a call named ``generator``/``rng``) and the methods called on them,
  including ``getattr(rng, name)(...)`` where ``name`` is a parameter whose
  call sites in the module pass string literals;
* ndarray attributes NumPy has and CuPy lacks (``.ctypes``, ``.setflags``,
  ``.flags.writeable``, ``.flags["WRITEABLE"]``), and ndarray method keywords
  NumPy accepts and CuPy does not (``.sum(where=...)``).

Everything is generic: it checks whatever code is there when it runs.
"""
import ast
import dataclasses
import inspect
import re
from pathlib import Path
from typing import Optional, Tuple

#: Names that always denote the array module.
_MODULE_NAMES = {"xp", "cupy", "cp"}
#: Calls whose result is the array module.
_MODULE_FACTORIES = {"get_array_module", "cupy_module"}
#: Calls whose result is a device random generator.
_GENERATOR_FACTORIES = {"default_rng", "Generator", "generator", "rng", "random_generator", "get_generator"}
#: Roots that are the host NumPy, never a device module.
_HOST_ROOTS = {"numpy", "np"}


@dataclasses.dataclass(frozen=True)
class Use:
    """One use of the array module, a generator or an ndarray feature.

    Attributes:
        kind: "module" (``xp.a.b``), "generator" (a method of a device
            random generator), "array_attribute" (an ndarray attribute),
            "flag" (``.flags.<name>``) or "array_method" (an ndarray method
            called with keywords).
        path: The chain of names, e.g. ``("random", "default_rng")``.
        keywords: Keyword argument names of the call (empty if not called).
        where: ``"file.py:line"``.
    """

    kind: str
    path: Tuple[str, ...]
    keywords: Tuple[str, ...]
    where: str


def _chain(node):
    """``a.b.c`` as ``(root_node, ["b", "c"])``; the root is the innermost non-Attribute."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return node, names[::-1]


def _call_name(node):
    """The last name of a call's function (``f`` of ``a.b.f(...)``), or None."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


def _keywords(call):
    return tuple(keyword.arg for keyword in call.keywords if keyword.arg is not None)


class _ModuleScanner(ast.NodeVisitor):
    """Collects the uses in one module; see the module docstring."""

    def __init__(self, filename, tree):
        self.filename = filename
        self.uses = []
        self.parents = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.functions = {node.name: node for node in ast.walk(tree)
                          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        self.tree = tree
        # Names bound by import statements are modules or functions, never
        # arrays: ``ops.resize(...)`` is minikeras's op, not ndarray.resize.
        self.imported = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
                         if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}

    # -- scopes ------------------------------------------------------------------
    def _scope(self, node):
        """The innermost function (or the module) containing ``node``."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return node
        return self.tree

    def _assigned_names(self, scope, predicate):
        """Names assigned (in ``scope``, not nested functions) from an expression matching ``predicate``."""
        names = set()
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and self._scope(node) is scope and predicate(node.value):
                names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        return names

    def _is_module_expr(self, node, aliases):
        if isinstance(node, ast.Name):
            return node.id in _MODULE_NAMES or node.id in aliases
        if isinstance(node, ast.Attribute):
            return node.attr == "xp"
        if isinstance(node, ast.IfExp):  # xp = cupy if on_gpu else numpy
            return self._is_module_expr(node.body, aliases) or self._is_module_expr(node.orelse, aliases)
        return _call_name(node) in _MODULE_FACTORIES

    def _module_aliases(self, scope):
        aliases = set()
        while True:  # to a fixed point: xp = device.xp; cupy = xp
            found = self._assigned_names(scope, lambda value: self._is_module_expr(value, aliases))
            if found <= aliases:
                return aliases
            aliases |= found

    def _is_generator_expr(self, node):
        if isinstance(node, ast.IfExp):  # generator = given if given is not None else random.generator(device)
            return self._is_generator_expr(node.body) or self._is_generator_expr(node.orelse)
        name = _call_name(node)
        if name is None:
            return False
        # Any helper named for a generator (_generator_for, device_generator),
        # except the host-only ones and Keras's SeedGenerator (it makes seeds).
        named_for_one = "generator" in name.lower() and not name.startswith("host") and name != "SeedGenerator"
        if name not in _GENERATOR_FACTORIES and not named_for_one:
            return False
        root, _ = _chain(node.func)
        if isinstance(root, ast.Name) and root.id in _HOST_ROOTS:
            return False
        return not self._returns_host_generator(name)

    def _returns_host_generator(self, name):
        """True when ``name`` is a function of this module whose every return
        is a host generator (``numpy.random.default_rng(...)``, ``host_rng()``)."""
        function = self.functions.get(name)
        if function is None:
            return False
        returns = [node.value for node in ast.walk(function) if isinstance(node, ast.Return) and node.value]

        def host(value):
            if not isinstance(value, ast.Call):
                return False
            root, _ = _chain(value.func)
            called = _call_name(value) or ""
            return (isinstance(root, ast.Name) and root.id in _HOST_ROOTS) or called.startswith("host")

        return bool(returns) and all(host(value) for value in returns)

    # -- collection --------------------------------------------------------------
    def _add(self, kind, path, keywords, node):
        self.uses.append(Use(kind, tuple(path), tuple(keywords), f"{self.filename}:{node.lineno}"))

    def scan(self):
        scopes = [self.tree] + [node for node in ast.walk(self.tree)
                                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
        module_aliases = {scope: self._module_aliases(scope) for scope in scopes}
        module_level = module_aliases[self.tree]
        generators = {scope: self._assigned_names(scope, self._is_generator_expr) for scope in scopes}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                self._array_use(node)  # every link: x.ctypes.data uses .ctypes
            if isinstance(node, ast.Attribute) and not isinstance(self.parents.get(node), ast.Attribute):
                scope = self._scope(node)
                self._module_use(node, module_aliases[scope] | module_level)
                self._generator_use(node, generators[scope])
            elif isinstance(node, ast.Subscript):
                self._flag_subscript(node)
            if isinstance(node, ast.Call) and _call_name(node) == "getattr" and isinstance(node.func, ast.Name):
                self._generator_getattr(node, generators[self._scope(node)])
        return self.uses

    def _call_of(self, node):
        parent = self.parents.get(node)
        return parent if isinstance(parent, ast.Call) and parent.func is node else None

    def _module_use(self, node, aliases):
        root, names = _chain(node)
        call = self._call_of(node)
        keywords = _keywords(call) if call else ()
        if self._is_module_expr(root, aliases):  # xp.a.b, cupy.a, get_array_module(x).a
            self._add("module", names, keywords, node)
        elif "xp" in names[:-1]:  # <anything>.xp.a.b
            self._add("module", names[names.index("xp") + 1:], keywords, node)

    def _generator_use(self, node, generator_names):
        if not (isinstance(node.value, ast.Name) and node.value.id in generator_names):
            return
        call = self._call_of(node)
        self._add("generator", [node.attr], _keywords(call) if call else (), node)

    def _generator_getattr(self, node, generator_names):
        """``getattr(rng, name)(..., **kwargs)`` with ``name``/``kwargs`` from call sites."""
        if len(node.args) < 2 or not (isinstance(node.args[0], ast.Name) and node.args[0].id in generator_names):
            return
        outer = self.parents.get(node)
        outer = outer if isinstance(outer, ast.Call) and outer.func is node else None
        keywords = set(_keywords(outer)) if outer else set()
        name_node = node.args[1]
        if isinstance(name_node, ast.Constant) and isinstance(name_node.value, str):
            self._add("generator", [name_node.value], sorted(keywords), node)
            return
        function = self._scope(node)
        if not isinstance(name_node, ast.Name) or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        params = [arg.arg for arg in function.args.args]
        if name_node.id not in params:
            return
        position = params.index(name_node.id)
        forwards_kwargs = outer is not None and function.args.kwarg is not None and any(
            keyword.arg is None and isinstance(keyword.value, ast.Name)
            and keyword.value.id == function.args.kwarg.arg for keyword in outer.keywords)
        for call in self.calls:
            if _call_name(call) != function.name or call is outer:
                continue
            method = None
            if len(call.args) > position and isinstance(call.args[position], ast.Constant):
                method = call.args[position].value
            for keyword in call.keywords:
                if keyword.arg == name_node.id and isinstance(keyword.value, ast.Constant):
                    method = keyword.value.value
            if not isinstance(method, str):
                continue
            forwarded = {keyword.arg for keyword in call.keywords
                         if keyword.arg is not None and keyword.arg not in params} if forwards_kwargs else set()
            self.uses.append(Use("generator", (method,), tuple(sorted(keywords | forwarded)),
                                 f"{self.filename}:{call.lineno}"))

    def _array_use(self, node):
        import numpy
        import cupy

        root, _ = _chain(node)
        if isinstance(root, ast.Name) and root.id in self.imported and root.id not in _MODULE_NAMES:
            return
        if node.attr in _numpy_only_array_attributes(numpy, cupy):
            self._add("array_attribute", [node.attr], (), node)
        if isinstance(node.value, ast.Attribute) and node.value.attr == "flags":
            self._add("flag", [node.attr], (), node)
        call = self._call_of(node)
        if call is not None and call.keywords and hasattr(numpy.ndarray, node.attr):
            root, _ = _chain(node)
            if not (isinstance(root, ast.Name) and root.id in _HOST_ROOTS):
                self._add("array_method", [node.attr], _keywords(call), node)

    def _flag_subscript(self, node):
        if (isinstance(node.value, ast.Attribute) and node.value.attr == "flags"
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            self._add("flag", [node.slice.value.lower()], (), node)


def _numpy_only_array_attributes(numpy, cupy):
    """Public ndarray attributes NumPy has and CuPy does not (``ctypes``, ``setflags``, ...)."""
    return {name for name in set(dir(numpy.ndarray)) - set(dir(cupy.ndarray)) if not name.startswith("_")}


def scan_source(source, filename="<source>"):
    """Returns the `Use` list of one module's source text."""
    return _ModuleScanner(filename, ast.parse(source)).scan()


def scan_package(root):
    """Returns the `Use` list of every ``.py`` file under ``root``."""
    root = Path(root)
    uses = []
    for path in sorted(root.rglob("*.py")):
        uses += scan_source(path.read_text(), str(path.relative_to(root.parent)))
    return uses


# -- what CuPy accepts ------------------------------------------------------------
_DOC_SIGNATURE = re.compile(r"^[\w.]*\((.*)\)")


def accepted_keywords(function) -> Optional[set]:
    """Keyword names ``function`` accepts, or None when it accepts any.

    ``inspect.signature`` first; when it is unavailable or ends in
    ``**kwargs`` (NumPy's C methods show ``(self, /, axis, ..., **kwargs)``
    while their docstring lists the real keywords), the ``__text_signature__``
    or the docstring's first line ``name(a, b=1, *, c=2)``.

    Raises:
        LookupError: Neither gives a signature.
    """
    from_signature = _keywords_from_signature(function)
    if from_signature is not None and from_signature is not _ANY:
        return from_signature
    text = getattr(function, "__text_signature__", None) or ""
    doc = (getattr(function, "__doc__", None) or "").strip()
    for candidate in (doc.splitlines()[0] if doc else "", text.strip()):
        match = _DOC_SIGNATURE.match(candidate)
        if match is not None:
            return _keywords_from_text(match.group(1))
    if from_signature is _ANY:
        return None
    raise LookupError(f"cannot read the signature of {function!r}")


_ANY = object()


def _keywords_from_signature(function):
    """A set, `_ANY` (``**kwargs``), or None (no usable signature)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    named = [parameter for parameter in parameters if parameter.name != "self"
             and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters):
        return _ANY
    if not named and parameters and all(parameter.kind is parameter.VAR_POSITIONAL for parameter in parameters):
        return None
    return {parameter.name for parameter in named if parameter.kind is not parameter.POSITIONAL_ONLY}


def _keywords_from_text(parameters_text):
    names = set()
    for part in _split_parameters(parameters_text):
        part = part.replace("\\", "").strip()
        if part.startswith("**"):
            return None
        name = re.split(r"[=:]", part, maxsplit=1)[0].strip().lstrip("*")
        if name and name not in {"/", "self", "$self"}:
            names.add(name)
    return names


def _split_parameters(text):
    """Splits a parameter list on top-level commas."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part for part in parts if part.strip()]


def resolve(module, path):
    """``module.a.b`` for path ``("a", "b")``, or raises AttributeError naming the missing part."""
    value = module
    for depth, name in enumerate(path):
        if not hasattr(value, name):
            raise AttributeError(f"{module.__name__}.{'.'.join(path[:depth + 1])} does not exist")
        value = getattr(value, name)
    return value
