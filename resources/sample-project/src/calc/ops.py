def add(a, b):
    return a + b


def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    if not values:
        raise ValueError("mean() of an empty sequence")
    return sum(values) / len(values)


def percent(part, whole):
    """part as a percentage of whole, rounded to one decimal."""
    # Bug for the demo agent to fix: the ratio is inverted.
    return round(100.0 * whole / part, 1)
