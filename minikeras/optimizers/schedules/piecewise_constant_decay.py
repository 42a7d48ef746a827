"""PiecewiseConstantDecay: a step function of the optimizer step."""
import bisect

from minikeras.optimizers.schedules.learning_rate_schedule import LearningRateSchedule, check_number, step_value


class PiecewiseConstantDecay(LearningRateSchedule):
    """A learning rate that is constant between step boundaries.

    ``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, and ``values[-1]`` once
    ``step > boundaries[-1]``.

    Args:
        boundaries: strictly increasing step numbers.
        values: one more value than there are boundaries.
        name: a label, kept in the config.

    Raises:
        ValueError: when ``len(values) != len(boundaries) + 1`` or the
            boundaries do not increase strictly.

    Example:
        >>> schedule = PiecewiseConstantDecay([100, 110], [1.0, 0.5, 0.1])
        >>> schedule(100), schedule(101), schedule(111)
        (1.0, 0.5, 0.1)
    """

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        boundaries, values = list(boundaries), list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "PiecewiseConstantDecay: the length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, "
                f"and values={values} of length {len(values)}."
            )
        for boundary in boundaries:
            check_number("PiecewiseConstantDecay", "boundaries", boundary)
        for value in values:
            check_number("PiecewiseConstantDecay", "values", value)
        if any(later <= earlier for earlier, later in zip(boundaries, boundaries[1:])):
            raise ValueError(f"PiecewiseConstantDecay: boundaries must increase strictly, received {boundaries}.")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        # bisect_left counts the boundaries strictly below the step, which is
        # the index of the interval (b[i-1], b[i]] holding it.
        index = bisect.bisect_left(self.boundaries, step_value(step, "PiecewiseConstantDecay"))
        return float(self.values[index])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}
