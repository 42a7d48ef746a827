"""The internal helpers every floor uses (ARCHITECTURE.md): argument checks,
nested structures, array-like conversion, weak tables, deferred device checks,
string hashes, the progress line, traceback filtering, batch packing, and the
registry, safe mode and memory budget that loading a file consults.

None of this is Keras's ``keras.utils`` (that is ``minikeras/utils/``, on the
top floor); a module here imports only the standard library, NumPy,
``backend``/``device`` (floors 0-1), ``errors`` and other ``_support`` modules.
"""
