"""sitegen: a static website for browsing and comparing SkyRL training runs."""

import gc

__version__ = "0.1.0"

# The ground truth ``sitegen synth`` writes at an archive's root (its damage is planted).
SYNTH_TRUTH = "synth-truth.json"

# Containers between young collections of the cyclic collector (the default is 700).
YOUNG_COLLECTION_EVERY = 50_000


def collect_less() -> None:
    """Set the collector's young threshold to :data:`YOUNG_COLLECTION_EVERY` (the others kept)."""
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])
