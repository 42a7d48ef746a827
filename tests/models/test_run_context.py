"""The trainer's one hook around its public entry points (_run_context):
MirroredModel limits its CPU replicas' BLAS threads there."""
import contextlib

import numpy

import minikeras as mk
from minikeras import layers


class _Counting(mk.Sequential):
    entered = 0
    depth = 0

    @contextlib.contextmanager
    def _run_context(self):
        type(self).entered += 1
        type(self).depth += 1
        try:
            yield
        finally:
            type(self).depth -= 1


def test_every_entry_point_runs_inside_the_hook():
    seen = []
    model = _Counting([layers.Input((3,)), layers.Lambda(lambda t: (seen.append(_Counting.depth), t)[1]),
                       layers.Dense(2)])
    model.compile("sgd", "mse")
    x, y = numpy.ones((4, 3), "float32"), numpy.zeros((4, 2), "float32")
    calls = [lambda: model.fit(x, y, epochs=1, verbose=0), lambda: model.evaluate(x, y, verbose=0),
             lambda: model.predict(x, verbose=0), lambda: model.train_on_batch(x, y),
             lambda: model.test_on_batch(x, y), lambda: model.predict_on_batch(x)]
    for count, call in enumerate(calls, start=1):
        seen.clear()
        call()
        assert _Counting.entered == count
        assert seen and min(seen) >= 1  # the layers ran inside it
    assert _Counting.depth == 0
